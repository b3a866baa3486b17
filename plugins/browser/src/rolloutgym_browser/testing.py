"""Test helpers for suites that drive the ``chromium`` backend."""

from __future__ import annotations

import os

__all__ = ["require_chromium"]


def require_chromium() -> str:
    """The Chromium executable, for a test that needs it.

    Skips the test when Chromium or Playwright is missing, except under ``CI=true``,
    where CI is expected to have installed them (``.ci/apt-packages.txt``) and a missing
    browser is a failure, not a skip.
    """
    import pytest

    from ._backend import BrowserError
    from ._browser_pool import find_chromium

    try:
        import playwright  # noqa: F401

        return find_chromium()
    except (BrowserError, ImportError) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the chromium backend cannot run here: {exc}")
        pytest.skip(f"the chromium backend cannot run here: {exc}")
