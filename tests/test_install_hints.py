"""Every ``pip install`` hint in the source names a package and extras that exist (issue 32).

The hints are read from the source of every package and plugin (messages, docstrings): each
rolloutgym distribution they name must be a project of this repository, each extra must be
declared by that project, and each ``./plugins/NAME`` / ``./packages/NAME`` folder must exist.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*ROOT.glob("packages/*/src"), *ROOT.glob("plugins/*/src"), ROOT / "protocol" / "src"]
HINT = re.compile(r"pip install ([^\n\"`)]*)")
OURS = re.compile(r"(?<![\w./-])'?(rolloutgym(?:-[a-z0-9]+)*)(\[[A-Za-z0-9_,-]+\])?")
FOLDER = re.compile(r"\./(plugins|packages)/([A-Za-z0-9_-]+)(\[[A-Za-z0-9_,-]+\])?")


def projects() -> dict[str, tuple[Path, set[str]]]:
    found = {}
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"), *ROOT.glob("packages/*/pyproject.toml")]:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        found[project["name"]] = (pyproject.parent, set(project.get("optional-dependencies", {})))
    found.setdefault("rolloutgym-protocol", (ROOT / "protocol", set()))
    return found


def hints() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        for path in source.rglob("*.py"):
            for match in HINT.finditer(path.read_text(encoding="utf-8")):
                found.append((f"{path.relative_to(ROOT)}", match.group(1)))
    return found


def problems_of(where: str, text: str, known: dict[str, tuple[Path, set[str]]]) -> list[str]:
    problems = []
    for name, extras in OURS.findall(text):
        if "{" in name:
            continue
        if name not in known:
            problems.append(f"{where}: 'pip install {text}' names {name}, which is no project of this repository")
            continue
        wanted = {extra for extra in extras.strip("[]").split(",") if extra}
        if wanted - known[name][1]:
            problems.append(f"{where}: {name} has no extra {sorted(wanted - known[name][1])}")
    for kind, folder, extras in FOLDER.findall(text):
        if "{" in folder or folder.isupper():
            continue  # a placeholder: ./plugins/{folder}, ./plugins/NAME
        pyproject = ROOT / kind / folder / "pyproject.toml"
        if not pyproject.is_file():
            problems.append(f"{where}: ./{kind}/{folder} is no package folder of the checkout")
            continue
        declared = set(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("optional-dependencies", {}))
        wanted = {extra for extra in extras.strip("[]").split(",") if extra}
        if wanted - declared:
            problems.append(f"{where}: ./{kind}/{folder} has no extra {sorted(wanted - declared)}")
    return problems


def test_every_install_hint_names_what_exists() -> None:
    known = projects()
    found = hints()
    assert len(found) > 30  # the hints are really read
    problems = [problem for where, text in found for problem in problems_of(where, text, known)]
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_wrong_name_or_extra() -> None:
    known = projects()
    assert problems_of("x", "rolloutgym-workflw", known)
    assert problems_of("x", "'rolloutgym[reprot]'", known)
    assert problems_of("x", "./plugins/nope", known)
    assert problems_of("x", "'./packages/rolloutgym[nope]'", known)
    assert not problems_of("x", "'rolloutgym-code[humaneval]' ./plugins/sql", known)
