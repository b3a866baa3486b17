"""The README's and the tutorial's shell and Python blocks, run as written, top to bottom (issue 32).

What this checks, and how:

* Every ``rolloutgym`` / ``rollout-run`` command and every Python block runs in a fresh working
  folder with a fresh home (HOME, XDG folders, caches in tmp; no ROLLOUTGYM_*, OPENAI_* or proxy
  variables), one process per command, through this environment's console scripts — the
  environment the suite installs (every package of the checkout), not a new venv: a new venv
  would have to fetch the dependencies from an index, and tests have no network.
* ``pip install`` lines are not run (no network): each package they name is checked instead —
  a local folder of the checkout with a pyproject.toml that declares the extras asked for, or a
  distribution the checkout depends on (torch), or hatch.
* Lines that need what a test cannot have are named in SKIPPED and checked only for their
  shape: a model download (``hf:smollm2``), a model server on a fixed port (``openai:``), the
  whole test suite (``hatch run test``).
* A line starting with ``> `` after a command is what you type into it (``play``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
COMMENT = re.compile(r"(^|\s)#\s.*$")
SKIPPED = {
    "hatch run test": "runs the whole suite",
    "--policy hf:": "downloads a model (the hf: policy is tested in plugins/transformers)",
    "--policy openai:": "needs a model server on a fixed port (tested in plugins/openai)",
}


def blocks(path: Path) -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(path.read_text(encoding="utf-8"))]


def shell_commands(text: str) -> list[tuple[str, str]]:
    """``(command, typed input)`` of a bash block: comments cut, ``&&`` chains split."""
    commands: list[list[str]] = []
    for raw in text.splitlines():
        if raw.startswith("> ") and commands:
            commands[-1][1] += raw[2:] + "\n"
            continue
        line = COMMENT.sub("", raw).strip()
        if line:
            commands.extend([part.strip(), ""] for part in line.split(" && "))
    return [(command, typed) for command, typed in commands]


def _pyproject(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))


def _declared_distributions() -> set[str]:
    names = set()
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"), *ROOT.glob("packages/*/pyproject.toml")]:
        project = _pyproject(pyproject.parent)["project"]
        for requirement in [
            *project.get("dependencies", []),
            *sum(project.get("optional-dependencies", {}).values(), []),
        ]:
            names.add(re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower())
    return names


def check_pip_install(command: str) -> None:
    """Each package a ``pip install`` line names exists where the line says (it is not run)."""
    words = shlex.split(command)[2:]
    skip_next = False
    for word in words:
        if skip_next or word.startswith("-"):
            skip_next = word in ("--index-url", "-i", "--extra-index-url")
            continue
        name, _, extras = word.partition("[")
        wanted = {extra for extra in extras.rstrip("]").split(",") if extra}
        if name.startswith("."):
            folder = (ROOT / name).resolve()
            assert (folder / "pyproject.toml").is_file(), f"{command!r}: {name} is no package folder of the checkout"
            known = set(_pyproject(folder)["project"].get("optional-dependencies", {}))
            assert wanted <= known, (
                f"{command!r}: {name} has no extra {sorted(wanted - known)} (it has {sorted(known)})"
            )
        else:
            assert name.lower() in _declared_distributions() | {"hatch"}, f"{command!r}: {name} is not a known package"


def fresh_environment(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    keep = {key: value for key, value in os.environ.items() if key in ("LANG", "LC_ALL", "TZ", "SYSTEMROOT")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PATH": f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "COLUMNS": "200",
        "HF_HUB_OFFLINE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def follow(path: Path, tmp: Path) -> list[str]:
    """Run the page's blocks in order in ``tmp``; returns the lines that were skipped."""
    environment = fresh_environment(tmp)
    skipped = []
    for kind, text in blocks(path):
        if kind == "python":
            result = subprocess.run(
                [sys.executable, "-c", text], cwd=tmp, env=environment, capture_output=True, text=True, timeout=180
            )
            assert result.returncode == 0, f"{path.name}: Python block failed:\n{text}\n{result.stderr[-3000:]}"
            continue
        for command, typed in shell_commands(text):
            if command.startswith("pip install"):
                check_pip_install(command)
                continue
            reason = next((why for marker, why in SKIPPED.items() if marker in command), None)
            if reason is not None:
                skipped.append(command)
                continue
            assert command.split()[0] in ("rolloutgym", "rollout-run"), f"{path.name}: unexpected command {command!r}"
            result = subprocess.run(
                command, shell=True, cwd=tmp, env=environment, input=typed, capture_output=True, text=True, timeout=180
            )
            assert "Traceback" not in result.stderr, (command, result.stderr[-3000:])
            if command.startswith("rolloutgym play"):  # the episode waits for more input: the end of input stops it
                assert result.returncode in (0, 1) and "stopped" in result.stdout + result.stderr, result.stdout
                assert "error:" not in result.stdout, result.stdout
                continue
            assert result.returncode == 0, (
                f"{path.name}: {command!r} failed ({result.returncode}):\n{result.stderr[-3000:]}"
            )
    return skipped


def test_the_readme_top_to_bottom(tmp_path: Path) -> None:
    skipped = follow(ROOT / "README.md", tmp_path)
    assert len(skipped) == 3, skipped  # hatch run test, hf:, openai: (see SKIPPED)
    for made in ("runs/demo.jsonl", "runs/shop.jsonl", "runs/shop-null.jsonl", "runs/arith.jsonl", "report.html"):
        assert (tmp_path / made).is_file(), made


def test_the_tutorial_top_to_bottom(tmp_path: Path) -> None:
    skipped = follow(ROOT / "docs" / "tutorial.md", tmp_path)
    assert skipped == [], skipped
    for made in ("runs/oracle.jsonl", "runs/null.jsonl", "runs/tutorial-arith.jsonl"):
        assert (tmp_path / made).is_file(), made


@pytest.mark.parametrize(
    "line",
    ["pip install ./plugins/nope", "pip install './packages/rolloutgym[nope]'", "pip install rolloutgym-workflw"],
)
def test_the_pip_check_can_fail(line: str) -> None:
    with pytest.raises(AssertionError):
        check_pip_install(line)
