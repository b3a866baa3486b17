"""The kit's pytest plugin: ``rolloutgym check`` inside a test (fixture ``env_check``).

Loaded by the ``pytest11`` entry point of rolloutgym-testing (or ``pytest_plugins =
["rolloutgym_testing.check_plugin"]`` in a ``conftest.py``)::

    def test_my_env_card(env_check):
        report = env_check("my_env.py", sample=5, waivers={"probe:negation": "why it cannot pass"})
        assert report.result("ceiling").status == "pass"

``env_check(reference, **options)`` runs :func:`rolloutgym.checks.check` (the same engine as the
command line) and fails the test with the card's failures and their findings when a check fails.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["assert_env_passes", "env_check", "failure_text"]


def failure_text(report: Any, *, findings: int = 5) -> str:
    """The failed checks of a report, each with its first findings, as one message."""
    lines = [f"{report.env_id} failed {len(report.failures)} check(s) ({len(report.tasks_checked)} task(s) checked):"]
    for result in report.failures:
        lines.append(f"  {result.name}: {result.summary}")
        lines.extend(f"    - {finding}" for finding in result.findings[:findings])
    return "\n".join(lines)


def assert_env_passes(reference: str, **options: Any) -> Any:
    """Run the report card of ``reference`` (``rolloutgym.checks.check`` options) and return it; fail on a failure."""
    from rolloutgym.checks import check

    report = check(reference, **options)
    if not report.ok:
        pytest.fail(failure_text(report), pytrace=False)
    return report


@pytest.fixture
def env_check() -> Any:
    """``env_check(reference, **options)``: the env's report card; the test fails when a check fails."""
    return assert_env_passes
