"""Shared fixtures of the rolloutgym-code tests (see ``rolloutgym_code.testing``)."""

from __future__ import annotations

import pytest
from rolloutgym_code.testing import require_sandbox


@pytest.fixture
def sandbox():
    """The default sandbox (bubblewrap when installed); skipped locally, failed under CI=true, when missing."""
    from rolloutgym_code.sandbox import get_sandbox

    require_sandbox(None)
    return get_sandbox(None)
