"""The ``docker`` provider: sandboxes as containers on any Docker Engine API endpoint.

Docker itself, or podman's API service (``podman system service --time=0 unix:///run/podman/podman.sock``;
what CI and the tests use). Endpoint: ``host=`` (``unix:///path.sock`` or ``tcp://host:port``),
else ``DOCKER_HOST``, else podman's then Docker's default socket.

What a sandbox gets (by construction, held by the engine, not by the agent's good will):

* **Limits**: CPU share (``NanoCpus``), memory (swap included), pids, RLIMIT_NOFILE, and each
  command's deadline (``timeout -s KILL`` on its process group; the client gives up reading
  past it and kills every process of the sandbox).
* **Disk**: with ``ResourceLimits.disk_bytes`` (the default) the image's root is read-only and
  the writable places (the working directory, ``/tmp``, ``/var/tmp``) are size-capped tmpfs
  mounts (podman copies the image's files into them; their pages count against the memory
  limit): nothing the agent writes reaches the host's disk. ``disk_bytes=None`` gives a
  writable root instead (for set-up that installs packages), unbounded.
* **No network** (``NetworkMode: none``) unless ``network=True``.
* **An unprivileged user** (``1000:1000`` by default; ``user="root"`` per exec for set-up),
  ``no-new-privileges``.
* **Labels** on every container, build and snapshot (``io.rolloutgym.sandbox`` and the owning
  process): the reaper, run when a provider starts, removes what runs killed with ``kill -9``
  left behind.
"""

from __future__ import annotations

import os
import resource
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._build import build_image, parse_image_map
from ._contract import (
    LABEL,
    BuildContext,
    ExecResult,
    ResourceLimits,
    RunningSandbox,
    SandboxInfraError,
    SandboxProvider,
)
from ._docker_files import read_archive_files
from ._engine import EngineClient, EngineError, demultiplex, tar_of
from ._owner import owner_alive, owner_label
from ._pool import WarmPool

__all__ = ["DockerProvider", "DockerSandbox"]

DEFAULT_USER = "1000:1000"
SNAPSHOT_REPOSITORY = "localhost/rolloutgym-snapshot"
# RLIMIT_NPROC counts the uid's processes host-wide; the pids cgroup is the per-sandbox bound.
_NPROC = min(16384, resource.getrlimit(resource.RLIMIT_NPROC)[1] if hasattr(resource, "RLIMIT_NPROC") else 16384)


class DockerProvider(SandboxProvider):
    """Containers on a Docker Engine API endpoint.

    Args:
        host: the endpoint (``unix:///run/podman/podman.sock``); default ``DOCKER_HOST`` or the usual sockets.
        image_map: ``FROM`` rewrites for builds and images (``{"python:3.11-slim": "localhost/..."}`` or
            ``"python:3.11-slim=localhost/...,..."``): offline base images.
        user: who commands run as by default (``uid:gid``).
        pool_size: ready containers kept per image and settings (0: none); a sandbox from the pool
            skips create and start.
        pool_idle: seconds a pooled container may wait before it is removed.
        reap: remove leftovers of dead runs (by label) when the provider starts.
    """

    name = "docker"
    capabilities = frozenset({"image", "build", "snapshot", "network"})

    def __init__(
        self,
        host: str | None = None,
        *,
        image_map: Any = None,
        user: str = DEFAULT_USER,
        pool_size: int = 0,
        pool_idle: float = 300.0,
        reap: bool = True,
    ) -> None:
        self.engine = EngineClient(host)
        self.image_map = parse_image_map(image_map)
        self.user = user
        self.owner = owner_label()
        self.pool = WarmPool(self._start_container, self._remove, size=int(pool_size), idle=float(pool_idle))
        self._reap_at_start = reap
        self._checked = False
        self._overlays: dict[str, dict[str, bytes]] = {}  # snapshot image -> tmpfs folder -> its tar
        self._live: set[DockerSandbox] = set()  # destroyed by close() if their owners did not (Ctrl-C, exit)
        self._lock = threading.Lock()

    def check(self) -> None:
        if self._checked:
            return
        self.engine.ping()
        self._checked = True
        if self._reap_at_start:
            self.reap()

    # -- images -------------------------------------------------------------------------

    def build(self, context: BuildContext) -> str:
        if self.image_map and not context.image_map:
            context = BuildContext(context.path, context.dockerfile, self.image_map)
        return build_image(self.engine, context, owner=self.owner)

    def _image(self, image: str | None, build: BuildContext | None) -> str:
        if build is not None:
            return self.build(build)
        if not image:
            raise SandboxInfraError("the docker provider needs an image or a build context to create a sandbox")
        image = self.image_map.get(image, image)
        if not self.engine.image_exists(image):
            raise SandboxInfraError(
                f"the image {image!r} is not on the engine at {self.engine.host} and nothing is pulled offline: "
                f"map it to a local image with --image-map {image}=localhost/rolloutgym/bookworm-python "
                "(scripts/build_base_images.sh builds that one), or pull it first"
            )
        return image

    # -- sandboxes ----------------------------------------------------------------------

    def create(
        self,
        *,
        image: str | None = None,
        build: BuildContext | None = None,
        limits: ResourceLimits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        labels: Mapping[str, str] | None = None,
        mounts: Mapping[str, str] | None = None,
    ) -> DockerSandbox:
        """``mounts``: host folders bound read-only into the container (``{host path: container path}``;
        the docker provider's own option: a harness's endpoint socket folder)."""
        self.check()
        sandbox = DockerSandbox(self)
        with sandbox.stages.measure("build"):
            resolved = self._image(image, build)
        settings = self._settings(resolved, limits, network, env, workdir, user, labels, mounts)
        container, timings = self.pool.take(settings)
        sandbox.attach(container, settings, timings)
        with self._lock:
            self._live.add(sandbox)
        overlay = self._overlays.get(image or "")
        if overlay:
            for tar in overlay.values():
                self.engine.request("PUT", f"/containers/{container}/archive", params={"path": "/"}, content=tar)
        return sandbox

    def _settings(
        self,
        image: str,
        limits: ResourceLimits | None,
        network: bool,
        env: Mapping[str, str] | None,
        workdir: str | None,
        user: str | None,
        labels: Mapping[str, str] | None,
        mounts: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        settings = {
            "image": image,
            "limits": limits or ResourceLimits(),
            "network": bool(network),
            "env": dict(env or {}),
            "workdir": (workdir or "/").rstrip("/") or "/",
            "user": user or self.user,
            "labels": dict(labels or {}),
        }
        if mounts:
            settings["mounts"] = dict(mounts)
        return settings

    def warm(
        self,
        *,
        image: str,
        limits: ResourceLimits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        labels: Mapping[str, str] | None = None,
        wait: bool = True,
    ) -> None:
        """Fill the warm pool for sandboxes created with these arguments (``wait``: until they are ready)."""
        self.check()
        settings = self._settings(self._image(image, None), limits, network, env, workdir, user, labels)
        self.pool.fill(settings, wait=wait)

    def ready(self, **arguments: Any) -> int:
        """How many pooled sandboxes are ready for ``create(**arguments)`` (image, limits, workdir, ...)."""
        names = ("limits", "network", "env", "workdir", "user", "labels")
        image = self.image_map.get(arguments["image"], arguments["image"])
        return self.pool.ready(self._settings(image, *(arguments.get(name) for name in names)))

    def _start_container(self, settings: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
        """Create and start one container with ``settings``; ``(id, stage seconds)``."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        body = _create_body(settings, self.owner)
        name = f"rolloutgym-{secrets.token_hex(6)}"
        created = self.engine.request("POST", "/containers/create", params={"name": name}, json=body)
        container = str(created["Id"])
        timings["create"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            self.engine.request("POST", f"/containers/{container}/start")
            if settings["user"] not in ("root", "0", "0:0") and settings["workdir"] != "/":
                _run_setup(self.engine, container, ["chown", "-R", settings["user"], settings["workdir"]])
        except BaseException:
            self._remove(container)
            raise
        timings["start"] = time.perf_counter() - started
        return container, timings

    def _remove(self, container: str) -> None:
        try:
            self.engine.remove_container(container)
        except SandboxInfraError:
            pass

    # -- clean-up -----------------------------------------------------------------------

    def drop_snapshot(self, reference: str) -> None:
        if reference in self._overlays or reference.startswith(SNAPSHOT_REPOSITORY + ":"):
            self._overlays.pop(reference, None)
            self.engine.remove_image(reference)

    def reap(self) -> int:
        """Remove containers and snapshot images labelled by rolloutgym whose owning process is gone."""
        removed = 0
        for container in self.engine.list_containers(LABEL):
            owner = (container.get("Labels") or {}).get(f"{LABEL}.owner", "")
            if not owner_alive(owner):
                self.engine.remove_container(str(container["Id"]))
                removed += 1
        for image in self.engine.list_images(f"{LABEL}=snapshot"):
            owner = (image.get("Labels") or {}).get(f"{LABEL}.owner", "")
            if not owner_alive(owner):
                self.engine.remove_image(str(image["Id"]))
                removed += 1
        return removed

    def close(self) -> None:
        """Destroy the sandboxes still alive, the pool's and the snapshots' images, and disconnect."""
        with self._lock:
            live, self._live = list(self._live), set()
        for sandbox in live:
            sandbox.destroy()
        self.pool.close()
        for image in list(self._overlays):
            try:
                self.engine.remove_image(image)
            except SandboxInfraError:
                pass
        self._overlays.clear()
        self.engine.close()


def _create_body(settings: Mapping[str, Any], owner: str) -> dict[str, Any]:
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
    # create(mounts=...): host folders bound read-only (issue 42: a harness's endpoint socket folder)
    if settings.get("mounts"):
        host["Binds"] = [f"{source}:{target}:ro" for source, target in settings["mounts"].items()]
    if limits.disk_bytes is not None:
        size = limits.disk_bytes
        tmpfs = {"/tmp": f"size={max(size // 4, 1 << 20)},mode=1777", "/var/tmp": "size=16m,mode=1777"}
        if workdir not in ("/", "/tmp", "/var/tmp"):
            tmpfs[workdir] = f"size={size}"
        host.update({"ReadonlyRootfs": True, "Tmpfs": tmpfs})
    labels = {**settings["labels"], LABEL: "sandbox", f"{LABEL}.owner": owner}
    environment = {"HOME": "/tmp", **settings["env"]}
    return {
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


def _run_setup(engine: EngineClient, container: str, command: list[str]) -> None:
    created = engine.request(
        "POST", f"/containers/{container}/exec", json={"Cmd": command, "User": "0", "AttachStdout": True}
    )
    output = engine.request("POST", f"/exec/{created['Id']}/start", json={"Detach": False, "Tty": False})
    status = engine.request("GET", f"/exec/{created['Id']}/json").get("ExitCode")
    if status not in (0, None):
        text = b"".join(demultiplex(iter([output]))).decode("utf-8", "replace") if isinstance(output, bytes) else ""
        raise SandboxInfraError(f"setting up the sandbox failed: {' '.join(command)} exited {status}: {text[-300:]}")


class DockerSandbox(RunningSandbox):
    """One container of a :class:`DockerProvider` (made by ``provider.create``)."""

    provider = "docker"

    def __init__(self, owner: DockerProvider) -> None:
        super().__init__()
        self._provider = owner
        self._engine = owner.engine
        self._settings: Mapping[str, Any] = {}
        self._destroyed = False
        self._execs = 0

    def attach(self, container: str, settings: Mapping[str, Any], timings: Mapping[str, float]) -> None:
        self.id, self.image, self.workdir = container, settings["image"], settings["workdir"]
        self._settings = settings
        for stage, seconds in timings.items():
            self.stages[stage] = round(seconds, 6)

    def _user(self, user: str | None) -> str:
        user = user or self._settings["user"]
        return "0" if user == "root" else user

    def exec(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        stdin: bytes | None = None,
        max_output_bytes: int = 1 << 20,
    ) -> ExecResult:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if stdin is not None:
            name = f"/tmp/.rolloutgym-stdin-{secrets.token_hex(4)}"
            self.write_files({os.path.basename(name): stdin}, "/tmp", user=user)
            argv = ["/bin/sh", "-c", f'exec "$0" "$@" < {name}', *argv]
        seconds = max(0.1, float(timeout))
        argv = ["timeout", "-s", "KILL", f"{seconds:.3f}", *argv]
        stage = "first_exec" if self._execs == 0 else "exec"
        self._execs += 1
        with self.stages.measure(stage) if stage == "first_exec" else _nothing():
            return self._exec(argv, seconds, env, workdir, user, max_output_bytes)

    def _exec(
        self,
        argv: list[str],
        seconds: float,
        env: Mapping[str, str] | None,
        workdir: str | None,
        user: str | None,
        max_output_bytes: int,
    ) -> ExecResult:
        body = {
            "Cmd": argv,
            "AttachStdout": True,
            "AttachStderr": True,
            "Env": [f"{key}={value}" for key, value in (env or {}).items()],
            "WorkingDir": workdir or self.workdir,
            "User": self._user(user),
        }
        started = time.monotonic()
        try:
            created = self._engine.request("POST", f"/containers/{self.id}/exec", json=body)
        except EngineError as exc:
            raise SandboxInfraError(f"the sandbox {self.id[:12]} is gone or stopped: {exc.engine_message}") from None
        kept, truncated, gave_up = self._read_output(created["Id"], started, seconds, max_output_bytes)
        duration = time.monotonic() - started
        if gave_up:
            self._kill_everything()
            return ExecResult(-9, _text(kept), timed_out=True, output_truncated=truncated, duration=duration)
        exit_code = self._engine.request("GET", f"/exec/{created['Id']}/json").get("ExitCode")
        exit_code = -1 if exit_code is None else int(exit_code)
        timed_out = exit_code == 137 and duration >= seconds * 0.98
        return ExecResult(exit_code, _text(kept), timed_out, truncated, duration)

    def _read_output(self, exec_id: str, started: float, seconds: float, limit: int) -> tuple[bytes, bool, bool]:
        import httpx

        kept, truncated = bytearray(), False
        deadline = started + seconds + 5.0
        try:
            with self._engine.stream(
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
            raise SandboxInfraError(self._engine.fix_hint()) from None
        return bytes(kept), truncated, False

    def _kill_everything(self) -> None:
        """Past the deadline with the output still open: kill every process but the sandbox's own."""
        try:
            _run_setup(self._engine, self.id, ["kill", "-9", "-1"])
        except SandboxInfraError:
            pass

    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        uid, gid = _ids(self._user(user))
        archive = tar_of(files, prefix=dest, uid=uid, gid=gid)
        try:
            self._engine.request("PUT", f"/containers/{self.id}/archive", params={"path": "/"}, content=archive)
        except EngineError as exc:
            raise SandboxInfraError(
                f"copying files into {dest} of sandbox {self.id[:12]}: {exc.engine_message}"
            ) from None

    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        return read_archive_files(self._engine, self.id, paths, max_bytes=max_bytes)

    def export_folder(self, path: str) -> bytes:
        """A tar of the folder ``path`` (names relative to its parent, as the engine gives them)."""
        data = self._engine.request("GET", f"/containers/{self.id}/archive", params={"path": path})
        return data if isinstance(data, bytes) else b""

    def import_folder(self, archive: bytes, parent: str) -> None:
        """Unpack a tar from :meth:`export_folder` under ``parent``."""
        self._engine.request(
            "PUT", f"/containers/{self.id}/archive", params={"path": "/"}, content=_rebase(archive, parent)
        )

    def snapshot(self) -> str:
        """Commit the container as an image (labelled with this process as owner); tmpfs folders
        (the working directory under a disk limit) travel as tars restored by ``create(image=...)``."""
        repository = SNAPSHOT_REPOSITORY
        tag = secrets.token_hex(6)
        changes = [f"LABEL {LABEL}=snapshot", f"LABEL {LABEL}.owner={self._provider.owner}"]
        params = {"container": self.id, "repo": repository, "tag": tag, "pause": "0", "changes": changes}
        self._engine.request("POST", "/commit", params=params, json={})
        image = f"{repository}:{tag}"
        limits: ResourceLimits = self._settings["limits"]
        if limits.disk_bytes is not None and self.workdir not in ("/", "/tmp", "/var/tmp"):
            raw = self._engine.request("GET", f"/containers/{self.id}/archive", params={"path": self.workdir})
            parent = os.path.dirname(self.workdir)
            self._provider._overlays[image] = {self.workdir: _rebase(raw, parent)}
        return image

    def destroy(self) -> None:
        if self._destroyed or not self.id:
            return
        self._destroyed = True
        with self.stages.measure("destroy"):
            self._provider._remove(self.id)
        with self._provider._lock:
            self._provider._live.discard(self)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _ids(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    try:
        return int(uid), int(gid or uid)
    except ValueError:
        return (0, 0) if user == "root" else (1000, 1000)


def _rebase(archive: bytes, parent: str) -> bytes:
    """A tar from ``GET archive`` (names relative to ``parent``) re-rooted at ``/``."""
    import io
    import tarfile

    source = tarfile.open(fileobj=io.BytesIO(archive))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            member.name = f"{parent.strip('/')}/{member.name}".strip("/")
            target.addfile(member, data)
    return out.getvalue()
