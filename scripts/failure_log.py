"""A pytest plugin that scripts/run_tests.py loads (``hatch run test``): each failed test is written to
``$ROLLOUTGYM_TEST_FAILURES`` as it fails (with xdist, by the controller), so a run that is killed or crashes
before pytest's summary still tells which tests failed."""

from __future__ import annotations

import os
from typing import Any


def pytest_runtest_logreport(report: Any) -> None:
    target = os.environ.get("ROLLOUTGYM_TEST_FAILURES")
    # Loaded as an object by run_tests.py's pytest.main(plugins=...): in the controller only (xdist's workers
    # do not get it), which hears every worker's reports.
    if not target or not report.failed:
        return
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    lines = (str(crash.message) if crash is not None else str(report.longreprtext or "")).strip().splitlines()
    last = (lines[0] if crash is not None else lines[-1])[:300] if lines else ""
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(f"FAILED {report.nodeid} ({report.when}) {last}\n")
