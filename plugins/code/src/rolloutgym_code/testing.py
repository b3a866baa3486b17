"""Test helpers for suites that run code in the sandbox (used by our tests; usable by yours).

``require_sandbox()`` skips a test when no sandbox works here, except under ``CI=true``,
where a missing sandbox (bubblewrap, Debian's python3-pytest) fails the test instead.
"""

from __future__ import annotations

import os

__all__ = ["require_sandbox"]


def require_sandbox(name: str | None = None) -> None:
    """Skip (locally) or fail (under ``CI=true``) unless sandbox ``name`` (default: auto) works."""
    import pytest

    from .sandbox import SandboxUnavailable, get_sandbox

    try:
        get_sandbox(name)
    except SandboxUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and the {name or 'default'} sandbox is unavailable: {exc}", pytrace=False)
        pytest.skip(f"sandbox unavailable: {exc}")
