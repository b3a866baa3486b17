"""The verifier of a generated repository task: ``tests/test.sh`` runs ``python3 /tests/grade.py``.

It runs in a fresh sandbox after the agent's commands have ended. It copies the working folder
to a scratch folder, deletes every test file, ``conftest.py``, ``sitecustomize.py``,
``usercustomize.py``, ``.pth`` file and pytest configuration there, lays the original test
folders and configuration (``/tests/trusted``) over it, runs the hidden test files with the
same pytest flags as the generator, and writes ``/logs/verifier/reward.json``: ``reward`` is 1
when every hidden test that passed before the bug was made passes, else 0. Stdlib only.
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

TESTS = "/tests"
CONFIG_NAMES = {"pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini"}
DROPPED_NAMES = {"conftest.py", "sitecustomize.py", "usercustomize.py"}


def _is_test_file(name):
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _strip(repo):
    for directory, folders, names in os.walk(repo):
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in names:
            at_root = directory == repo
            if (
                name in DROPPED_NAMES
                or _is_test_file(name)
                or name.endswith(".pth")
                or (at_root and name in CONFIG_NAMES)
            ):
                os.remove(os.path.join(directory, name))


def _overlay(source, target):
    for directory, _folders, names in os.walk(source):
        relative = os.path.relpath(directory, source)
        destination = os.path.normpath(os.path.join(target, relative))
        if os.path.islink(destination) or (os.path.exists(destination) and not os.path.isdir(destination)):
            os.remove(destination)
        os.makedirs(destination, exist_ok=True)
        for name in names:
            path = os.path.join(destination, name)
            if os.path.islink(path) or os.path.isdir(path):
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
            shutil.copyfile(os.path.join(directory, name), path)


def main():
    with open(os.path.join(TESTS, "grading.json"), encoding="utf-8") as handle:
        spec = json.load(handle)
    scratch = tempfile.mkdtemp(prefix="grade-")
    repo = os.path.join(scratch, "repo")
    shutil.copytree(spec["workdir"], repo, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    _strip(repo)
    _overlay(os.path.join(TESTS, "trusted"), repo)
    report = os.path.join(scratch, f"report-{secrets.token_hex(8)}.json")
    source_root = os.path.join(repo, spec["source_root"]) if spec["source_root"] else repo
    environment = dict(os.environ)
    environment.update(
        PYTHONPATH=os.pathsep.join([os.path.join(TESTS, "support"), source_root, repo]),
        PYTHONDONTWRITEBYTECODE="1",
        RG_REPORT=report,
        HOME=scratch,
    )
    command = [sys.executable, "-m", "pytest", *spec["pytest_flags"], f"--rootdir={repo}", *spec["hidden_files"]]
    try:  # pytest's own output holds timings: the summary below is printed instead (the same run, the same text)
        subprocess.run(
            command,
            cwd=repo,
            env=environment,
            timeout=spec["timeout"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        print(f"the tests ran past {spec['timeout']:.0f} s")
    outcomes = {}
    if os.path.isfile(report) and not os.path.islink(report):
        with open(report, encoding="utf-8") as handle:
            outcomes = json.load(handle)
    expected = spec["expected"]
    passed = [test for test in expected if outcomes.get(test, ["missing"])[0] == "passed"]
    fixed = [test for test in spec["fail_to_pass"] if test in passed]
    reward = 1.0 if expected and len(passed) == len(expected) else 0.0
    result = {
        "reward": reward,
        "hidden_tests": len(passed) / len(expected) if expected else 0.0,
        "fail_to_pass": len(fixed) / len(spec["fail_to_pass"]) if spec["fail_to_pass"] else 0.0,
    }
    with open("/logs/verifier/reward.json", "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    print(
        f"hidden tests: {len(passed)}/{len(expected)} pass; the bug's tests: {len(fixed)}/{len(spec['fail_to_pass'])}"
    )
    for test in [test for test in expected if test not in passed][:10]:
        outcome, message = (outcomes.get(test) or ["did not run", ""])[:2]
        print(f"- {test}: {outcome}" + (f": {message}" if message else ""))


if __name__ == "__main__":
    main()
