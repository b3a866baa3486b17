"""The shipped family ``code/repo-bugs-v0``: tasks made by ``rolloutgym tasks make-repo`` from
real PyPI packages, split by package (train, dev and test hold different repositories).

The data is ``data/repo-bugs-v0/``: ``packages.json`` (each package's version, license, kind,
split and task count) and one ``<package>.tar.xz`` per package, the generator's output folder
(Harbor task folders; xz's window makes the repeated repository copies nearly free). On first
use the archives are unpacked (tarfile's ``data`` filter) into
``$XDG_CACHE_HOME/rolloutgym/repo-bugs-v0/<content hash>/`` and each task runs as a
:class:`~rolloutgym_code.harbor.HarborTaskEnv`. Rebuild or extend it with::

    python -m rolloutgym_code.repotasks.family build --sdists FOLDER   # FOLDER: sdists, or empty to download
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any

__all__ = ["FAMILY", "RepoBugTask", "build_family", "make_repo_bug_env", "materialise", "repo_bug_tasks"]

FAMILY = "repo-bugs-v0"
TASKS_PER_PACKAGE = 25


@dataclass(frozen=True)
class RepoBugTask:
    """One task of the family: its id, split, Harbor task folder and ``[metadata]``."""

    id: str
    split: str
    folder: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _data_dir() -> Any:
    return package_files("rolloutgym_code").joinpath("data", FAMILY)


def catalogue() -> list[dict[str, Any]]:
    """``packages.json``: one entry per package (name, version, license, kind, split, tasks)."""
    return json.loads(_data_dir().joinpath("packages.json").read_text(encoding="utf-8"))["packages"]


def _cache_root(entries: list[dict[str, Any]]) -> Path:
    """A folder named by the content of the catalogue and of every archive."""
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode("utf-8"))
    for entry in entries:
        digest.update(_data_dir().joinpath(entry["archive"]).read_bytes())
    digest = digest.hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rolloutgym" / FAMILY / digest


@functools.cache
def materialise() -> Path:
    """Unpack every package's archive once (a temporary folder renamed into place) and return the root."""
    entries = catalogue()
    root = _cache_root(entries)
    root.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        target = root / entry["name"]
        if target.is_dir():
            continue
        staging = Path(tempfile.mkdtemp(prefix=f".{entry['name']}-", dir=root))
        try:
            with (
                _data_dir().joinpath(entry["archive"]).open("rb") as raw,
                tarfile.open(fileobj=raw, mode="r:xz") as tar,
            ):
                tar.extractall(staging, filter="data")
            try:
                os.replace(staging, target)
            except OSError:  # another process unpacked it first
                shutil.rmtree(staging, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return root


@functools.cache
def repo_bug_tasks() -> list[RepoBugTask]:
    """Every task, in package order then task order (the ``tasks`` entry point of the EnvSpec)."""
    root = materialise()
    tasks = []
    for entry in catalogue():
        folder = root / entry["name"]
        for task_dir in sorted(path for path in folder.iterdir() if (path / "task.toml").is_file()):
            metadata = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8")).get("metadata", {})
            tasks.append(RepoBugTask(task_dir.name, entry["split"], str(task_dir), metadata))
    return tasks


def make_repo_bug_env(task: RepoBugTask, **options: Any) -> Any:
    """The env of one task: a :class:`~rolloutgym_code.harbor.HarborTaskEnv` on its folder."""
    from .._harbor_task import read_task
    from ..harbor import HarborTaskEnv

    return HarborTaskEnv(read_task(task.folder), **options)


# -- building the data ----------------------------------------------------------------------


def _pack(folder: Path, archive: Path) -> None:
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        for path in sorted(folder.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(folder).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if path.is_file():
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)


def build_family(sources: list[dict[str, Any]], out: Path, *, sdists: Path | None, seed: int = 0) -> list[dict]:
    """Generate each source package's tasks and pack them into ``out`` (``packages.json`` and archives)."""
    from . import RepoTaskError, make_repo_tasks

    existing = out / "packages.json"
    kept = json.loads(existing.read_text(encoding="utf-8"))["packages"] if existing.is_file() else []
    entries = [entry for entry in kept if entry["name"] not in {source["name"] for source in sources}]
    for source in sources:
        spec = f"{source['name']}=={source['version']}"
        if sdists is not None:
            found = sorted(sdists.glob(f"{source['name'].replace('-', '_')}-{source['version']}.*")) + sorted(
                sdists.glob(f"{source['name']}-{source['version']}.*")
            )
            spec = str(found[0]) if found else spec
        with tempfile.TemporaryDirectory() as temporary:
            tasks_dir = Path(temporary) / source["name"]
            try:
                generation = make_repo_tasks(
                    spec,
                    tasks_dir,
                    seed=seed,
                    max_tasks=source.get("max_tasks", TASKS_PER_PACKAGE),
                    split=source["split"],
                )
            except RepoTaskError as exc:
                print(f"skipped {spec}: {exc}", flush=True)
                continue
            archive = f"{source['name']}.tar.xz"
            _pack(tasks_dir, out / archive)
        entry = {
            **source,
            "license": generation.project.license,
            "archive": archive,
            "tasks": len(generation.bugs),
            "tried": generation.tried,
            "seconds": round(generation.seconds),
        }
        entries.append(entry)
        print(json.dumps(entry), flush=True)
        (out / "packages.json").write_text(json.dumps({"packages": entries}, indent=1) + "\n", encoding="utf-8")
    return entries


def refresh_support(archive: Path) -> None:
    """Put the current ``tests/grade.py`` and ``tests/support/rg_report.py`` into every task of
    ``archive`` (the verifier's code is the same for every task; the tasks' data stay as they are)."""
    from .runner import reporter_source

    grade = package_files("rolloutgym_code.repotasks").joinpath("data/grade.py").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "tasks"
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(folder, filter="data")
        for task in folder.iterdir():
            if (task / "tests" / "grade.py").is_file():
                (task / "tests" / "grade.py").write_text(grade, encoding="utf-8")
                (task / "tests" / "support" / "rg_report.py").write_text(reporter_source(), encoding="utf-8")
        _pack(folder, archive)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rolloutgym_code.repotasks.family")
    parser.add_argument(
        "command", choices=["build", "refresh"], help="refresh: the verifier's code in --out's archives"
    )
    parser.add_argument("--sources", type=Path, help="JSON list: name, version, kind, split (build)")
    parser.add_argument("--out", type=Path, required=True, help="where packages.json and the archives go")
    parser.add_argument("--sdists", type=Path, help="a folder of downloaded sdists (else pip downloads them)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    arguments.out.mkdir(parents=True, exist_ok=True)
    if arguments.command == "refresh":
        for archive in sorted(arguments.out.glob("*.tar.xz")):
            refresh_support(archive)
        return
    if arguments.sources is None:
        parser.error("build needs --sources")
    sources = json.loads(arguments.sources.read_text(encoding="utf-8"))
    build_family(sources, arguments.out, sdists=arguments.sdists, seed=arguments.seed)


if __name__ == "__main__":
    main()
