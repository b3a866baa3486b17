"""Fixtures of the rolloutgym-browser tests."""

from __future__ import annotations

import pytest
from rolloutgym_browser.testing import require_chromium


@pytest.fixture
def chromium() -> str:
    """The Chromium executable (skips without one; fails under CI=true)."""
    return require_chromium()
