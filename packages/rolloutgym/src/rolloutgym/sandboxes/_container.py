"""The engine's side of a docker sandbox: the container's create body, set-up and exec through the
engine (where the exec agent is not running), tars of folders."""

from __future__ import annotations

import io
import resource
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._agent import MOUNT, agent_entrypoint
from ._contract import LABEL, ExecResult, ResourceLimits, SandboxInfraError
from ._engine import EngineClient, EngineError, demultiplex

__all__ = ["create_body", "engine_exec", "ids", "rebase", "run_setup", "text"]

# RLIMIT_NPROC counts the uid's processes host-wide; the pids cgroup is the per-sandbox bound.
_NPROC = min(16384, resource.getrlimit(resource.RLIMIT_NPROC)[1] if hasattr(resource, "RLIMIT_NPROC") else 16384)


def create_body(settings: Mapping[str, Any], owner: str, agent: Path | None = None) -> dict[str, Any]:
    """The ``POST /containers/create`` body; with ``agent`` (its host folder) pid 1 is the exec agent."""
    limits: ResourceLimits = settings["limits"]
    workdir: str = settings["workdir"]
    host: dict[str, Any] = {
        "NanoCpus": int(limits.cpus * 1e9),
        "Memory": limits.memory_bytes,
        "MemorySwap": limits.memory_bytes,
        "PidsLimit": limits.pids,
        "NetworkMode": "bridge" if settings["network"] else "none",
        "SecurityOpt": ["no-new-privileges"],
        "Ulimits": [
            {"Name": "nofile", "Soft": limits.open_files, "Hard": limits.open_files},
            {"Name": "nproc", "Soft": _NPROC, "Hard": _NPROC},  # named, or podman adds 1048576 (refused here)
        ],
        "Init": False,
    }
    if limits.disk_bytes is not None:
        size = limits.disk_bytes
        tmpfs = {"/tmp": f"size={max(size // 4, 1 << 20)},mode=1777", "/var/tmp": "size=16m,mode=1777"}
        if workdir not in ("/", "/tmp", "/var/tmp"):
            tmpfs[workdir] = f"size={size}"
        host.update({"ReadonlyRootfs": True, "Tmpfs": tmpfs})
    labels = {**settings["labels"], LABEL: "sandbox", f"{LABEL}.owner": owner}
    environment = {"HOME": "/tmp", **settings["env"]}
    body = {
        "Image": settings["image"],
        "Entrypoint": ["sleep"],
        "Cmd": ["infinity"],
        "WorkingDir": workdir,
        "User": settings["user"],
        "Env": [f"{key}={value}" for key, value in environment.items()],
        "Labels": labels,
        "HostConfig": host,
        "StopSignal": "SIGKILL",  # sleep as pid 1 ignores SIGTERM: removal would wait out a timeout
        "StopTimeout": 1,
    }
    # create(mounts=...): host folders bound read-only (issue 42: a harness's endpoint socket folder)
    binds = [f"{source}:{target}:ro" for source, target in settings.get("mounts", {}).items()]
    if binds:
        host["Binds"] = binds
    if agent is not None:  # the agent runs as root and drops to the sandbox's user for every command
        host["Binds"] = [*binds, f"{agent}:{MOUNT}:rw"]
        body.update({"Entrypoint": agent_entrypoint(), "Cmd": [], "User": "0:0"})
    return body


def run_setup(engine: EngineClient, container: str, command: list[str]) -> None:
    """Run ``command`` as root through the engine's exec; a failure is a :class:`SandboxInfraError`."""
    created = engine.request(
        "POST", f"/containers/{container}/exec", json={"Cmd": command, "User": "0", "AttachStdout": True}
    )
    output = engine.request("POST", f"/exec/{created['Id']}/start", json={"Detach": False, "Tty": False})
    status = engine.request("GET", f"/exec/{created['Id']}/json").get("ExitCode")
    if status not in (0, None):
        text = b"".join(demultiplex(iter([output]))).decode("utf-8", "replace") if isinstance(output, bytes) else ""
        raise SandboxInfraError(f"setting up the sandbox failed: {' '.join(command)} exited {status}: {text[-300:]}")


def engine_exec(
    engine: EngineClient, container: str, body: Mapping[str, Any], seconds: float, limit: int
) -> ExecResult:
    """One command through the engine's exec (``body`` is the exec's create body; its ``Cmd`` is
    wrapped in ``timeout -s KILL``): past the deadline with the output still open, every process
    of the sandbox but pid 1 is killed."""
    started = time.monotonic()
    try:
        created = engine.request("POST", f"/containers/{container}/exec", json=body)
    except EngineError as exc:
        raise SandboxInfraError(f"the sandbox {container[:12]} is gone or stopped: {exc.engine_message}") from None
    kept, truncated, gave_up = _read_output(engine, created["Id"], started, seconds, limit)
    duration = time.monotonic() - started
    if gave_up:
        try:
            run_setup(engine, container, ["kill", "-9", "-1"])
        except SandboxInfraError:
            pass
        return ExecResult(-9, text(kept), timed_out=True, output_truncated=truncated, duration=duration)
    exit_code = engine.request("GET", f"/exec/{created['Id']}/json").get("ExitCode")
    exit_code = -1 if exit_code is None else int(exit_code)
    timed_out = exit_code == 137 and duration >= seconds * 0.98
    return ExecResult(exit_code, text(kept), timed_out, truncated, duration)


def _read_output(
    engine: EngineClient, exec_id: str, started: float, seconds: float, limit: int
) -> tuple[bytes, bool, bool]:
    import httpx

    kept, truncated = bytearray(), False
    deadline = started + seconds + 5.0
    try:
        with engine.stream(
            "POST", f"/exec/{exec_id}/start", read_timeout=seconds + 5.0, json={"Detach": False, "Tty": False}
        ) as response:
            for payload in demultiplex(response.iter_raw()):
                if len(kept) < limit:
                    kept += payload[: limit - len(kept)]
                truncated = truncated or len(kept) >= limit and bool(payload)
                if time.monotonic() > deadline:
                    return bytes(kept), truncated, True
    except httpx.ReadTimeout:
        return bytes(kept), truncated, True
    except (httpx.TransportError, OSError):
        raise SandboxInfraError(engine.fix_hint()) from None
    return bytes(kept), truncated, False


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def ids(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    try:
        return int(uid), int(gid or uid)
    except ValueError:
        return (0, 0) if user == "root" else (1000, 1000)


def rebase(archive: bytes, parent: str) -> bytes:
    """A tar from ``GET archive`` (names relative to ``parent``) re-rooted at ``/``."""
    source = tarfile.open(fileobj=io.BytesIO(archive))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            member.name = f"{parent.strip('/')}/{member.name}".strip("/")
            target.addfile(member, data)
    return out.getvalue()
