"""A pytest plugin that writes each test's outcome to the JSON file named by ``RG_REPORT``.

Stdlib only: it runs with the sandbox's own pytest (``-p rg_report``). Outcomes: ``passed``,
``failed``, ``error`` (setup or teardown failed, or a file did not collect) and ``skipped``
(``xfail`` included); each with the first line of the failure's message. With ``RG_TRACE``
set to a folder, it also records which functions under that folder each test called
(``sys.setprofile``: the file and first line of each code object), under ``__calls__``;
``__cpu__`` is the CPU seconds pytest's process used.
"""

import json
import os
import sys

import pytest

_RESULTS = {}
_CALLS = {}
_ROOT = os.environ.get("RG_TRACE")


if _ROOT:

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        seen = set()

        def profile(frame, event, argument):
            if event == "call":
                code = frame.f_code
                if code.co_filename.startswith(_ROOT):
                    seen.add((code.co_filename[len(_ROOT) :], code.co_firstlineno))

        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            _CALLS[item.nodeid] = sorted(seen)


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else "")[:300]


def pytest_runtest_logreport(report):
    previous = _RESULTS.get(report.nodeid)
    if previous is not None and previous[0] in ("failed", "error"):
        return
    if report.when == "call":
        outcome = "skipped" if report.skipped else report.outcome
        _RESULTS[report.nodeid] = [outcome, _message(report) if report.failed else ""]
    elif report.failed:
        _RESULTS[report.nodeid] = ["error", _message(report)]
    elif report.skipped and report.when == "setup":
        _RESULTS[report.nodeid] = ["skipped", ""]


def pytest_collectreport(report):
    if report.failed:
        _RESULTS["collect::" + report.nodeid] = ["error", _message(report)]


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("RG_REPORT")
    if path:
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        data = {**_RESULTS, "__cpu__": usage.ru_utime + usage.ru_stime}
        if _ROOT:
            data["__calls__"] = _CALLS
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
