"""The trusted runner of a grading run (its source is run with ``python -I -B -c`` on the host).

It runs pytest on the hidden tests (and the original visible tests and conftest files) in a
private folder that the sandbox never sees; the modules of the code under test are proxies
(:mod:`rolloutgym_code._bridge_proxies`) whose every call goes to the server in the sandbox, and
whose answers are plain data built here. No code under test ever runs in this process, so
the verdict, the expected values and the hidden tests are out of its reach by construction.
The results go to a file in the private folder, read by the host when this process ends.
"""

import importlib
import json
import os
import sys
import time


def _recorder(results):
    """A pytest plugin recording one result per test (passed only when setup, call and
    teardown all passed; skipped and xfailed count as skipped)."""
    phases = {}

    def add(record):
        results.append(json.dumps(record, ensure_ascii=False, sort_keys=True))

    def short(text):
        lines = [line.rstrip() for line in str(text).strip().splitlines() if line.strip()]
        return " | ".join(lines[-8:])[:600]

    class Recorder:
        @staticmethod
        def pytest_collection_finish(session):
            add({"kind": "collected", "ids": [item.nodeid for item in session.items]})

        @staticmethod
        def pytest_collectreport(report):
            if report.failed:
                add({"kind": "collect_error", "id": report.nodeid, "message": short(report.longreprtext)})

        @staticmethod
        def pytest_runtest_logreport(report):
            phases.setdefault(report.nodeid, []).append(
                (report.when, report.outcome, bool(getattr(report, "wasxfail", None)), short(report.longreprtext))
            )

        @staticmethod
        def pytest_runtest_logfinish(nodeid, location):
            outcome, message, seen_call = "passed", "", False
            for when, phase_outcome, xfail, text in phases.pop(nodeid, []):
                seen_call = seen_call or when == "call"
                if phase_outcome == "failed":
                    outcome, message = ("failed" if when == "call" else "error"), text
                    break
                if phase_outcome == "skipped" or xfail:
                    outcome, message = "skipped", text
                    break
            if outcome == "passed" and not seen_call:
                outcome, message = "error", "the test's call phase never ran"
            add({"kind": "test", "id": nodeid, "outcome": outcome, "message": message})

    return Recorder()


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    sys.path.insert(0, config["support"])  # the bridge (a package) and the exact-type guard, copied there
    bridge = importlib.import_module("_rolloutgym_bridge._bridge")  # imports all of the bridge: before install()
    proxies = importlib.import_module("_rolloutgym_bridge._bridge_proxies")

    session = bridge.BridgeSession(config["read_fd"], config["write_fd"], time.monotonic() + float(config["seconds"]))
    proxies.install(session, config["front"], config["back"])
    import pytest

    results = []
    try:
        exit_code = pytest.main(list(config["args"]), plugins=[_recorder(results)])
    except BaseException as exc:  # noqa: BLE001 - reported as a crash of the run
        results.append(json.dumps({"kind": "crash", "message": f"{type(exc).__name__}: {exc}"[:600]}))
        exit_code = 3
    os.close(config["write_fd"])
    temporary = config["result"] + ".part"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"pytest_exit": int(exit_code), "results": results, "tampering": []}, handle)
    os.replace(temporary, config["result"])
    sys.stdout.flush()
    os._exit(0)


main()
