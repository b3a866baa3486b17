"""The agent's bubblewrap sandbox sees an allow-list (issue 50, class 3): its work folder, the
system, the interpreter's standard library and the agent's own packages; never rolloutgym's
packages, the env plugins' data (``bench/gsm8k-v0``'s answers), a code env's reference fixes,
hidden tests or graders. A harness that goes looking for them, by their host paths, by import,
and by walking the whole filesystem, finds nothing; and the harness still works (the endpoint,
its SDKs, mini-swe-agent's packages)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
import rolloutgym
import rolloutgym_benchmarks
import rolloutgym_code
from rolloutgym import arollout, get_registry
from rolloutgym_harness._sandbox import AGENT_SITE, package_binds
from rolloutgym_harness.harness import make_policy
from rolloutgym_protocol.errors import ConfigError

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)")

GSM8K = Path(rolloutgym_benchmarks.__file__).parent / "data" / "gsm8k_sample.jsonl"
PYBUGS = Path(rolloutgym_code.__file__).parent / "data" / "pybugs-v0"
FIX = next(PYBUGS.glob("*/fix/*.py"))
HIDDEN = next(PYBUGS.glob("*/hidden/tests/*.py"))

SEEKER = """
import importlib, json, os, sys
found = {"read": {}, "imports": {}, "walk": [], "site": {}}
for path in sys.argv[1:]:
    try:
        found["read"][path] = open(path).read()[:40]
    except OSError as exc:
        found["read"][path] = type(exc).__name__
for name in ("rolloutgym", "rolloutgym_benchmarks", "rolloutgym_code", "rolloutgym_harness", "rolloutgym_protocol"):
    try:
        importlib.import_module(name)
        found["imports"][name] = "imported"
    except ImportError:
        found["imports"][name] = "missing"
for folder in (os.path.dirname(os.path.dirname(os.__file__)) + "/python3.11/site-packages", sys.prefix + "/lib"):
    try:
        found["site"][folder] = os.listdir(folder)
    except OSError as exc:
        found["site"][folder] = type(exc).__name__
skip = {"/proc", "/sys", "/dev", "/usr/share", "/usr/include", "/usr/src"}
for root, dirs, files in os.walk("/"):
    if root in skip:
        dirs[:] = []
        continue
    for name in dirs + files:
        fix = name == %r and root.endswith("/fix")
        if fix or name.startswith("rolloutgym_") or name in ("rolloutgym", "gsm8k_sample.jsonl", "pybugs-v0", %r):
            found["walk"].append(os.path.join(root, name))
import openai  # the agent's own packages are there
found["openai"] = openai.__file__
print(json.dumps(found))
"""


def _run(tmp_path: Path, script: str, *arguments: str, **options: object) -> dict:
    work = tmp_path / "work"
    work.mkdir()
    (work / "seek.py").write_text(script)
    command = " ".join([sys.executable, "seek.py", *arguments])
    policy = make_policy("command", command=command, model="hf:tiny", workdir=str(work), sandbox="bwrap", **options)
    trajectory = asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))
    record = trajectory.steps[0].policy_info["harness"]
    assert record["stop_reason"] == "done", record["stderr_tail"]
    return json.loads(trajectory.steps[0].action)


def test_the_agent_finds_no_answers_fixes_or_plugins(tmp_path: Path) -> None:
    paths = [str(GSM8K), str(FIX), str(HIDDEN), rolloutgym.__file__, str(Path(rolloutgym_code.__file__).parent)]
    found = _run(tmp_path, SEEKER % (FIX.name, HIDDEN.name), *paths)
    assert set(found["read"].values()) <= {"FileNotFoundError", "NotADirectoryError"}, found["read"]
    assert set(found["imports"].values()) == {"missing"}, found["imports"]
    assert found["walk"] == [], found["walk"]
    for folder, listing in found["site"].items():  # package folders are hidden or absent
        assert listing in ([], "FileNotFoundError"), (folder, listing)
    assert found["openai"].startswith(AGENT_SITE)


def test_the_host_can_read_them(tmp_path: Path) -> None:
    """The control: the same seeker outside the sandbox finds what the sandboxed one could not."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "seek.py").write_text(SEEKER.split("skip = ")[0] + "print(json.dumps(found))\n")
    policy = make_policy("command", command=f"{sys.executable} seek.py {GSM8K}", model="hf:tiny", workdir=str(work))
    trajectory = asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))
    found = json.loads(trajectory.steps[0].action)
    assert found["read"][str(GSM8K)] not in ("FileNotFoundError", "PermissionError")
    assert found["imports"]["rolloutgym_benchmarks"] == "imported"


@pytest.mark.parametrize("name", ["rolloutgym", "rolloutgym-code", "rolloutgym_benchmarks"])
def test_rolloutgym_packages_cannot_be_listed(name: str) -> None:
    with pytest.raises(ConfigError, match="never visible to the agent"):
        make_policy("command", command="agent", model="hf:tiny", sandbox="bwrap", sandbox_packages=name)


def test_unknown_package_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="not-a-real-package is not installed"):
        make_policy("command", command="agent", model="hf:tiny", sandbox="bwrap", sandbox_packages="not-a-real-package")


def test_a_package_brings_what_it_requires_and_nothing_else() -> None:
    targets = {target.rsplit("/", 1)[1] for _, target in package_binds(("openai",))}
    assert {"openai", "pydantic", "anyio", "jiter"} <= targets
    excluded = ("rolloutgym", "_editable_impl", "__pycache__", "torch", "transformers", "mcp")
    assert not any(name.startswith(excluded) for name in targets)


def test_no_packages_means_the_standard_library_only(tmp_path: Path) -> None:
    script = (
        "import json, sqlite3\ntry:\n    import openai\n    print('openai')\nexcept ImportError:\n    print('none')\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text(script)
    policy = make_policy(
        "command",
        command=f"{sys.executable} a.py",
        model="hf:tiny",
        workdir=str(work),
        sandbox="bwrap",
        sandbox_packages="",
    )
    trajectory = asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))
    assert trajectory.steps[0].action == "none", trajectory.steps[0].policy_info["harness"]["stderr_tail"]
