"""A Python project to make tasks from: its source distribution from PyPI or a local checkout,
read into memory (text files only), with its layout (source modules, test files) and license.

``pip download --no-deps --no-binary :all:`` fetches the sdist (pip may prepare its metadata,
as ``pip install`` would); the archive is unpacked here with tarfile's ``data`` filter (no
links out, no devices, no absolute paths) and never imported or run on the host: its tests
run in the sandbox (:mod:`.runner`).
"""

from __future__ import annotations

import email.parser
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["Project", "RepoTaskError", "load_project"]

MAX_ARCHIVE_BYTES = 20 << 20
MAX_TEXT_BYTES = 16 << 20
_SKIP_DIRS = {".git", ".hg", ".tox", ".nox", "__pycache__", "build", "dist", ".venv", "venv", ".eggs", "node_modules"}
_NOT_SOURCE_DIRS = {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench", "scripts"}
_NOT_SOURCE_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "runtests.py", "run_tests.py"}
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini")


class RepoTaskError(Exception):
    """A project tasks cannot be made from; the message is one line naming the reason."""


@dataclass
class Project:
    """A project's files and layout.

    Attributes:
        name: the distribution's name.
        version: its version (``"local"`` for a checkout without metadata).
        files: every text file, relative path to content.
        source_root: ``"src"`` for a src layout, else ``""``.
        modules: source modules (paths) that candidate bugs are made in.
        tests: test files (paths).
        license: the license as the metadata states it (or the license file's first line).
    """

    name: str
    version: str
    files: dict[str, str]
    source_root: str = ""
    modules: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    license: str = "unknown"

    def module_name(self, path: str) -> str:
        """The dotted import name of a source module."""
        inside = path[len(self.source_root) + 1 :] if self.source_root else path
        dotted = inside.removesuffix(".py").replace("/", ".")
        return dotted.removesuffix(".__init__")

    def test_dirs(self) -> list[str]:
        """The top folders that hold tests (``""`` when a test file sits at the root)."""
        found = set()
        for path in self.tests:
            parts = PurePosixPath(path).parts
            found.add(parts[0] if len(parts) > 1 else "")
        return sorted(found)


def _is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _in_test_dir(path: str) -> bool:
    return any(part in ("tests", "test", "testing") for part in PurePosixPath(path).parts[:-1])


def _layout(project: Project) -> None:
    paths = sorted(project.files)
    project.source_root = "src" if any(p.startswith("src/") and p.endswith(".py") for p in paths) else ""
    project.tests = [p for p in paths if _is_test_file(p)]
    prefix = project.source_root + "/" if project.source_root else ""
    modules = []
    for path in paths:
        if not path.endswith(".py") or not path.startswith(prefix) or _is_test_file(path) or _in_test_dir(path):
            continue
        inside = PurePosixPath(path[len(prefix) :])
        if (
            inside.name in _NOT_SOURCE_FILES
            or inside.parts[0] in _NOT_SOURCE_DIRS
            or inside.name.startswith("_version")
        ):
            continue
        if len(inside.parts) > 1 and f"{prefix}{inside.parts[0]}/__init__.py" not in project.files:
            continue  # a folder that is not a package (scripts, tools)
        modules.append(path)
    project.modules = modules


def _read_tree(root: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    total = 0
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in relative.parts[:-1]):
            continue
        if path.is_symlink() or not path.is_file() or path.suffix in (".pyc", ".so", ".pyd", ".o"):
            continue
        data = path.read_bytes()
        if b"\x00" in data:
            continue  # binary files are not part of a text workspace
        try:
            files[relative.as_posix()] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        total += len(data)
        if total > MAX_TEXT_BYTES:
            raise RepoTaskError(
                f"{root.name}: more than {MAX_TEXT_BYTES >> 20} MiB of text files; use a smaller project"
            )
    return files


def _metadata(files: dict[str, str]) -> tuple[str | None, str | None, str]:
    text = files.get("PKG-INFO", "")
    message = email.parser.Parser().parsestr(text) if text else None
    name = message.get("Name") if message else None
    version = message.get("Version") if message else None
    license_text = ""
    if message:
        license_text = (message.get("License-Expression") or message.get("License") or "").strip()
        if not license_text or len(license_text) > 80:
            classifiers = [c.split("::")[-1].strip() for c in message.get_all("Classifier") or [] if "License" in c]
            first_line = license_text.splitlines()[0][:80] if license_text else ""
            license_text = ", ".join(classifiers) or first_line
    if not license_text:
        for candidate in ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENSE.rst", "COPYING", "LICENCE"):
            if candidate in files:
                first = next((line.strip() for line in files[candidate].splitlines() if line.strip()), "")
                license_text = f"{first[:80]} (from {candidate})"
                break
    return name, version, license_text or "unknown"


def _download(spec: str, folder: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", str(folder)]
    result = subprocess.run([*command, spec], capture_output=True, text=True, check=False, timeout=600)  # noqa: S603
    archives = sorted(p for p in folder.iterdir() if p.suffix in (".gz", ".zip", ".bz2", ".xz"))
    if result.returncode != 0 or not archives:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        reason = lines[-1].strip() if lines else f"pip exited with {result.returncode}"
        raise RepoTaskError(f"{spec}: no source distribution could be downloaded ({reason[:200]})")
    return archives[0]


def _unpack(archive: Path, folder: Path) -> Path:
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise RepoTaskError(
            f"{archive.name}: the sdist is {archive.stat().st_size >> 20} MiB (over {MAX_ARCHIVE_BYTES >> 20} MiB); "
            "choose a smaller package"
        )
    target = folder / "unpacked"
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as bundle:
            for member in bundle.infolist():
                name = PurePosixPath(member.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise RepoTaskError(f"{archive.name}: a member path leaves the archive ({member.filename})")
            bundle.extractall(target)
    else:
        with tarfile.open(archive) as bundle:
            bundle.extractall(target, filter="data")
    entries = [p for p in target.iterdir() if p.is_dir()]
    return entries[0] if len(entries) == 1 else target


def load_project(spec: str) -> Project:
    """The project named by ``spec``: ``NAME``, ``NAME==VERSION`` (PyPI's sdist) or a local folder.

    Raises:
        RepoTaskError: no sdist, a huge one, no tests, no source modules.
    """
    local = Path(spec).expanduser()
    with tempfile.TemporaryDirectory(prefix="rolloutgym-make-repo-") as temporary:
        if local.is_dir():
            root = local.resolve()
        elif local.suffix in (".gz", ".zip") and local.is_file():
            root = _unpack(local, Path(temporary))
        else:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(==[A-Za-z0-9.+!_-]+)?", spec):
                raise RepoTaskError(f"{spec!r}: give a package name (NAME or NAME==VERSION) or a local folder")
            root = _unpack(_download(spec, Path(temporary)), Path(temporary))
        files = _read_tree(root)
    name, version, license_text = _metadata(files)
    fallback_name, _, fallback_version = spec.partition("==")
    project = Project(
        name=name or (local.name if local.is_dir() else fallback_name),
        version=version or fallback_version or "local",
        files=files,
        license=license_text,
    )
    _layout(project)
    if not project.tests:
        raise RepoTaskError(f"{project.name}: no test files (test_*.py or *_test.py) in the source; it cannot grade")
    if not project.modules:
        raise RepoTaskError(f"{project.name}: no Python source modules outside the tests to put bugs in")
    return project
