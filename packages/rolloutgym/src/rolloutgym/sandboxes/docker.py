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

**Fast commands** (``agent=True``, the default on a local engine): a container's pid 1 is a
small exec agent (:mod:`._box_agent`, stdlib Python, run as root, dropping to the sandbox's
user for every command) listening on a unix socket in a host folder of the container's own,
bind-mounted at ``/.rolloutgym`` (root's, mode 0700: the sandbox's user cannot reach it). A
command is then one connection and a fork, not an engine exec (a ``runc exec`` and a monitor
process each). Where the image has no Python 3.9+, or the engine runs elsewhere (``tcp://``),
commands go through the engine's exec as before. ``destroy`` stops every process of the
sandbox at once (the agent kills them and exits) and the engine removes the container behind
(``close`` waits for those removals).
"""

from __future__ import annotations

import os
import posixpath
import queue
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._agent import AgentFolders, AgentGone, call, wait_ready
from ._build import build_image, parse_image_map, prune_builds
from ._container import create_body, engine_exec, ids, rebase, run_setup, text
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
from ._engine import EngineClient, EngineError, tar_of
from ._owner import owner_alive, owner_label
from ._pool import WarmPool

__all__ = ["DockerProvider", "DockerSandbox"]

DEFAULT_USER = "1000:1000"
SNAPSHOT_REPOSITORY = "localhost/rolloutgym-snapshot"
AGENT_WAIT = 30.0  # seconds a new container's agent may take to answer (Python's start on a busy machine)


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
        reap: remove leftovers of dead runs (by label) when the provider starts, and the images
            it built past the ``keep_builds`` newest that are older than an hour and unused.
        keep_builds: how many built images (``localhost/rolloutgym-build``) the reaper keeps.
        agent: run commands through the exec agent in each container (a local engine only;
            ``False``: the engine's exec for every command).
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
        keep_builds: int = 8,
        agent: bool = True,
    ) -> None:
        self.engine = EngineClient(host)
        self.image_map = parse_image_map(image_map)
        self.user = user
        self.owner = owner_label()
        self.pool = WarmPool(self._start_container, self._remove, size=int(pool_size), idle=float(pool_idle))
        self._reap_at_start = reap
        self.keep_builds = int(keep_builds)
        self._checked = False
        self._overlays: dict[str, dict[str, bytes]] = {}  # snapshot image -> tmpfs folder -> its tar
        self._live: set[DockerSandbox] = set()  # destroyed by close() if their owners did not (Ctrl-C, exit)
        self._lock = threading.Lock()
        local = self.engine.host.startswith("unix://")
        self._agents = AgentFolders(self.owner) if agent and local else None
        self._agent_on = self._agents is not None
        self._images: set[str] = set()  # images known to be on the engine (not asked again)
        self._folders: dict[str, Path] = {}  # container -> its agent's host folder
        self._sockets: dict[str, Path] = {}  # container -> its agent's socket, once it answers
        self._removals: queue.Queue[str | None] = queue.Queue()
        self._remover: threading.Thread | None = None

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
        if image in self._images:
            return image
        if not self.engine.image_exists(image):
            raise SandboxInfraError(
                f"the image {image!r} is not on the engine at {self.engine.host} and nothing is pulled offline: "
                f"map it to a local image with --image-map {image}=localhost/rolloutgym/bookworm-python "
                "(scripts/build_base_images.sh builds that one), or pull it first"
            )
        self._images.add(image)
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
        name = f"rolloutgym-{secrets.token_hex(6)}"
        folder = self._agents.make(name) if self._agents is not None and self._agent_on else None
        body = create_body(settings, self.owner, folder)
        try:
            created = self.engine.request("POST", "/containers/create", params={"name": name}, json=body)
        except BaseException:
            if folder is not None:
                AgentFolders.remove(folder)
            raise
        container = str(created["Id"])
        if folder is not None:
            with self._lock:
                self._folders[container] = folder
        timings["create"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            self.engine.request("POST", f"/containers/{container}/start")
            self._set_up(container, folder, settings)
        except BaseException:
            self._remove(container)
            raise
        timings["start"] = time.perf_counter() - started
        return container, timings

    def _set_up(self, container: str, folder: Path | None, settings: Mapping[str, Any]) -> None:
        """Wait for the container's agent (else use the engine's exec) and hand the working folder to the user."""
        if folder is not None and wait_ready(folder, AGENT_WAIT):
            with self._lock:
                self._sockets[container] = folder / "agent.sock"
        elif folder is not None and not (folder / "no-agent").exists():
            self._agent_on = False  # the engine cannot see our folder: no agents from now on
        chown = ["chown", "-R", settings["user"], settings["workdir"]]
        if settings["user"] in ("root", "0", "0:0") or settings["workdir"] == "/":
            return
        sock = self._sockets.get(container)
        if sock is None:
            run_setup(self.engine, container, chown)
            return
        header, output = call(sock, {"op": "exec", "argv": chown, "timeout": 60}, timeout=90)
        if header.get("exit") != 0:
            raise SandboxInfraError(f"setting up the sandbox failed: {' '.join(chown)}: {text(output)[-300:]}")

    def _remove(self, container: str) -> None:
        with self._lock:
            folder = self._folders.pop(container, None)
            self._sockets.pop(container, None)
        try:
            self.engine.remove_container(container)
        except SandboxInfraError:
            pass
        if folder is not None:
            AgentFolders.remove(folder)

    def _remove_later(self, container: str) -> None:
        """Remove the (stopped) container in the provider's remover thread; ``close`` waits for it."""
        with self._lock:
            if self._remover is None or not self._remover.is_alive():
                self._remover = threading.Thread(target=self._remove_queued, daemon=True)
                self._remover.start()
        self._removals.put(container)

    def _remove_queued(self) -> None:
        while (container := self._removals.get()) is not None:
            with self._lock:
                folder = self._folders.pop(container, None)
                self._sockets.pop(container, None)
            self.engine.remove_container_behind(container)
            if folder is not None:
                AgentFolders.remove(folder)

    # -- clean-up -----------------------------------------------------------------------

    def drop_snapshot(self, reference: str) -> None:
        if reference in self._overlays or reference.startswith(SNAPSHOT_REPOSITORY + ":"):
            self._overlays.pop(reference, None)
            self._images.discard(reference)
            self.engine.remove_image(reference)

    def reap(self) -> int:
        """Remove containers and snapshot images labelled by rolloutgym whose owning process is gone,
        the agent folders of dead runs, and built images past ``keep_builds`` (older than an hour, unused)."""
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
        return removed + AgentFolders.reap() + prune_builds(self.engine, keep=self.keep_builds)

    def close(self) -> None:
        """Destroy the sandboxes still alive, the pool's and the snapshots' images, and disconnect."""
        with self._lock:
            live, self._live = list(self._live), set()
        for sandbox in live:
            sandbox.destroy()
        self.pool.close()
        if self._remover is not None:
            self._removals.put(None)
            self._remover.join()
        for image in list(self._overlays):
            try:
                self.engine.remove_image(image)
            except SandboxInfraError:
                pass
        self._overlays.clear()
        if self._agents is not None:
            self._agents.close()
        self.engine.close()


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
        self._agent: Path | None = None  # the exec agent's socket, where it runs

    def attach(self, container: str, settings: Mapping[str, Any], timings: Mapping[str, float]) -> None:
        self.id, self.image, self.workdir = container, settings["image"], settings["workdir"]
        self._settings = settings
        self._agent = self._provider._sockets.get(container)
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
        seconds = max(0.1, float(timeout))
        stage = "first_exec" if self._execs == 0 else "exec"
        self._execs += 1
        with self.stages.measure(stage) if stage == "first_exec" else _nothing():
            if self._agent is not None and _numeric(self._user(user)):  # a user name: the engine resolves it
                return self._agent_exec(argv, seconds, env, workdir, user, stdin, max_output_bytes)
            if stdin is not None:
                name = f"/tmp/.rolloutgym-stdin-{secrets.token_hex(4)}"
                self.write_files({os.path.basename(name): stdin}, "/tmp", user=user)
                argv = ["/bin/sh", "-c", f'exec "$0" "$@" < {name}', *argv]
            body = {
                "Cmd": ["timeout", "-s", "KILL", f"{seconds:.3f}", *argv],
                "AttachStdout": True,
                "AttachStderr": True,
                "Env": [f"{key}={value}" for key, value in (env or {}).items()],
                "WorkingDir": workdir or self.workdir,
                "User": self._user(user),
            }
            return engine_exec(self._engine, self.id, body, seconds, max_output_bytes)

    def _agent_exec(
        self,
        argv: list[str],
        seconds: float,
        env: Mapping[str, str] | None,
        workdir: str | None,
        user: str | None,
        stdin: bytes | None,
        limit: int,
    ) -> ExecResult:
        uid, gid = ids(self._user(user))
        request = {"op": "exec", "argv": argv, "cwd": workdir or self.workdir, "uid": uid, "gid": gid}
        request.update({"env": dict(env or {}), "timeout": seconds, "max_output": limit})
        started = time.monotonic()
        try:
            header, output = call(self._agent, request, stdin=stdin or b"", timeout=seconds + 30.0)  # type: ignore[arg-type]
        except AgentGone as exc:
            raise SandboxInfraError(f"the sandbox {self.id[:12]} is gone or stopped: {exc}") from None
        duration = time.monotonic() - started
        truncated = bool(header.get("truncated"))
        if header.get("timed_out"):
            return ExecResult(-9, text(output), timed_out=True, output_truncated=truncated, duration=duration)
        return ExecResult(int(header.get("exit", -1)), text(output), False, truncated, duration)

    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        uid, gid = ids(self._user(user))
        archive = tar_of(files, prefix=dest, uid=uid, gid=gid)
        try:
            self._engine.request("PUT", f"/containers/{self.id}/archive", params={"path": "/"}, content=archive)
        except EngineError as exc:
            raise SandboxInfraError(
                f"copying files into {dest} of sandbox {self.id[:12]}: {exc.engine_message}"
            ) from None

    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        if self._agent is None:
            return read_archive_files(self._engine, self.id, paths, max_bytes=max_bytes)
        normal = {posixpath.normpath(path): path for path in paths}
        try:
            header, payload = call(self._agent, {"op": "read", "paths": list(normal), "max_bytes": max_bytes})
        except AgentGone as exc:
            raise SandboxInfraError(f"the sandbox {self.id[:12]} is gone or stopped: {exc}") from None
        found, offset = {}, 0
        for path, size in header.get("files", []):
            found[path] = payload[offset : offset + size]
            offset += size
        return found

    def export_folder(self, path: str) -> bytes:
        """A tar of the folder ``path`` (names relative to its parent, as the engine gives them)."""
        data = self._engine.request("GET", f"/containers/{self.id}/archive", params={"path": path})
        return data if isinstance(data, bytes) else b""

    def import_folder(self, archive: bytes, parent: str) -> None:
        """Unpack a tar from :meth:`export_folder` under ``parent``."""
        self._engine.request(
            "PUT", f"/containers/{self.id}/archive", params={"path": "/"}, content=rebase(archive, parent)
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
            self._provider._overlays[image] = {self.workdir: rebase(raw, parent)}
        return image

    def destroy(self) -> None:
        if self._destroyed or not self.id:
            return
        self._destroyed = True
        with self.stages.measure("destroy"):
            if self._agent is not None and _stop_agent(self._agent):
                self._provider._remove_later(self.id)  # every process is gone; the engine's removal runs behind
            else:
                self._provider._remove(self.id)
        with self._provider._lock:
            self._provider._live.discard(self)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _stop_agent(sock: Path) -> bool:
    """Have the agent kill every process of its sandbox and exit (the container stops); whether it did."""
    try:
        call(sock, {"op": "exit"}, timeout=10.0)
    except AgentGone:
        return False
    return True


def _numeric(user: str) -> bool:
    return all(part.isdigit() for part in user.split(":"))
