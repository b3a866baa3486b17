"""A Harbor task folder read and checked: ``instruction.md``, ``task.toml``, the Dockerfile's
``WORKDIR`` and ``COPY`` lines (the workspace's seed files), ``tests/`` and ``solution/``
(:func:`read_task` gives a :class:`HarborTask`; the env is :mod:`rolloutgym_code.harbor`)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rolloutgym_protocol.errors import EnvFileError

from ._harbor_sandbox import check_workdir
from ._paths import check_relative_path

__all__ = ["MARKER", "MAX_SEED_BYTES", "HarborTask", "read_task"]


MARKER = "task.toml"
_SECTIONS = {
    "schema_version",
    "task",
    "metadata",
    "verifier",
    "agent",
    "environment",
    "solution",
    "source",
    "artifacts",
}
MAX_SEED_BYTES = 64 << 20


@dataclass(frozen=True)
class HarborTask:
    """One Harbor task folder, read from disk (paths only: tests and solution stay on disk)."""

    id: str
    path: str
    instruction: str
    workdir: str = "/app"
    seed: Mapping[str, str] = field(default_factory=dict)  # workspace path -> host file
    agent_timeout: float = 600.0
    verifier_timeout: float = 600.0
    verifier_env: Mapping[str, str] = field(default_factory=dict)
    solution_env: Mapping[str, str] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()  # task.toml settings this sandbox does not honour
    environment: Mapping[str, Any] = field(default_factory=dict)  # [environment] as written (container sandboxes)
    verifier: Mapping[str, Any] = field(default_factory=dict)  # [verifier] as written (environment_mode, ...)


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        line = found.group(1) if found else "1"
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
        raise EnvFileError(f"{path}:{line}: not valid TOML ({reason}); fix the line and run again") from None
    except UnicodeDecodeError:
        raise EnvFileError(f"{path}:1: not UTF-8 text") from None


def _table(data: Mapping[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise EnvFileError(f"{path}: [{name}] must be a table, got {type(value).__name__}")
    return value


def _seconds(table: Mapping[str, Any], section: str, path: Path, default: float) -> float:
    value = table.get("timeout_sec", default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e7:
        raise EnvFileError(f"{path}: [{section}] timeout_sec must be a positive number of seconds, got {value!r}")
    return float(value)


def _strings(table: Mapping[str, Any], section: str, path: Path) -> dict[str, str]:
    value = table.get("env", {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise EnvFileError(f"{path}: [{section}] env must be a table of strings")
    return dict(value)


def _dockerfile(environment_dir: Path) -> tuple[str | None, list[tuple[str, str]]]:
    """The last ``WORKDIR`` and the ``COPY``/``ADD`` pairs (source, destination) of the Dockerfile."""
    dockerfile = environment_dir / "Dockerfile"
    if not dockerfile.is_file():
        return None, []
    workdir: str | None = None
    copies: list[tuple[str, str]] = []
    text = dockerfile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    for line in text.splitlines():
        words = line.strip().split()
        if not words or words[0].startswith("#"):
            continue
        instruction = words[0].upper()
        if instruction == "WORKDIR" and len(words) >= 2:
            target = words[1]
            workdir = target if target.startswith("/") else f"{(workdir or '/').rstrip('/')}/{target}"
        elif instruction in ("COPY", "ADD"):
            arguments = [word for word in words[1:] if not word.startswith("--")]
            if len(arguments) >= 2 and not arguments[0].startswith("["):
                destination = arguments[-1]
                if not destination.startswith("/"):
                    destination = f"{(workdir or '/').rstrip('/')}/{destination}"
                copies += [(source, destination) for source in arguments[:-1]]
    return workdir, copies


def _seed_files(environment_dir: Path, workdir: str, copies: list[tuple[str, str]]) -> dict[str, str]:
    """Workspace path -> host file, for the Dockerfile's COPY/ADD lines that land in ``workdir``."""
    seed: dict[str, str] = {}
    root = environment_dir.resolve()
    for source, destination in copies:
        if "://" in source:
            continue
        if destination.rstrip("/") != workdir and not destination.startswith(workdir + "/"):
            continue
        relative = destination[len(workdir) :].strip("/")
        origin = (environment_dir / source).resolve()
        if not origin.is_relative_to(root) or not origin.exists():
            continue
        if origin.is_dir():
            for file in sorted(origin.rglob("*")):
                if file.is_file() and not file.is_symlink():
                    inside = file.relative_to(origin).as_posix()
                    seed[str(PurePosixPath(relative, inside))] = str(file)
        elif origin.is_file():
            target = relative if relative and not destination.endswith("/") else origin.name
            if relative and destination.endswith("/"):
                target = f"{relative}/{origin.name}"
            seed[target] = str(origin)
    return {check_relative_path(path).as_posix(): host for path, host in seed.items()}


def read_task(folder: str | Path) -> HarborTask:
    """One task folder (``instruction.md``, ``task.toml``, ``tests/test.sh``, ...).

    Raises:
        EnvFileError: a missing file or a malformed ``task.toml`` (``path:line: ...``).
    """
    folder = Path(folder).resolve()
    config_path = folder / MARKER
    data = _toml(config_path)
    instruction_path = folder / "instruction.md"
    if not instruction_path.is_file():
        raise EnvFileError(f"{folder}: no instruction.md (a Harbor task needs instruction.md, task.toml, tests/)")
    if not (folder / "tests" / "test.sh").is_file():
        raise EnvFileError(f"{folder}: no tests/test.sh (the verifier that writes /logs/verifier/reward.txt)")
    instruction = instruction_path.read_text(encoding="utf-8", errors="replace")
    if not instruction.strip():
        raise EnvFileError(f"{instruction_path}: empty; write what the agent is asked to do")
    if data.get("steps"):
        raise EnvFileError(f"{config_path}: multi-step tasks ([[steps]]) are not supported; give one task per folder")
    agent = _table(data, "agent", config_path)
    verifier = _table(data, "verifier", config_path)
    environment = _table(data, "environment", config_path)
    solution = _table(data, "solution", config_path)
    metadata = _table(data, "metadata", config_path)
    package = _table(data, "task", config_path)
    docker_workdir, copies = _dockerfile(folder / "environment")
    workdir = environment.get("workdir") or docker_workdir or "/app"
    if not isinstance(workdir, str) or check_workdir(workdir.rstrip("/") or "/"):
        raise EnvFileError(f"{config_path}: [environment] workdir: {check_workdir(str(workdir))}")
    workdir = workdir.rstrip("/")
    ignored = [f"[{name}]" for name in sorted(set(data) - _SECTIONS)]
    ignored += [
        f"[environment] {key}"
        for key in ("docker_image", "cpus", "memory_mb", "storage_mb", "gpus", "allow_internet", "network_mode")
        if key in environment
    ]
    if "timeout_sec" in agent:
        ignored.append("[agent] timeout_sec (not enforced: give the run a --timeout)")
    if (folder / "tests" / "Dockerfile").is_file():
        ignored.append("tests/Dockerfile (a separate verifier image: not built; the tests run in the sandbox)")
    if (folder / "environment" / "Dockerfile").is_file():
        ignored.append("environment/Dockerfile (not built: only its WORKDIR and COPY lines are read)")
    name = package.get("name") if isinstance(package.get("name"), str) else None
    return HarborTask(
        id=(name or folder.name).replace("/", "-"),
        path=str(folder),
        instruction=instruction,
        workdir=workdir,
        seed=_seed_files(folder / "environment", workdir, copies),
        agent_timeout=_seconds(agent, "agent", config_path, 600.0),
        verifier_timeout=_seconds(verifier, "verifier", config_path, 600.0),
        verifier_env=_strings(verifier, "verifier", config_path),
        solution_env=_strings(solution, "solution", config_path),
        metadata=dict(metadata),
        ignored=tuple(ignored),
        environment=dict(environment),
        verifier=dict(verifier),
    )
