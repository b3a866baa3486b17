"""The ``bwrap`` sandbox behind the core's contract (:mod:`rolloutgym.sandboxes`): ``get_provider("bwrap")``.

A sandbox is an :class:`~rolloutgym_code._harbor_sandbox.EpisodeSandbox` (the Harbor template's,
unchanged): a host folder kept for the sandbox's life, bound at its working directory; each
``exec`` is a fresh bubblewrap run (new network, PID, IPC and UTS namespaces, read-only ``/usr``,
a private ``/tmp``, rlimits, an unprivileged uid), so files persist between commands and
processes do not. There is no image: the filesystem is the host's ``/usr`` (``image=`` only takes
a snapshot of this provider). A snapshot is a copy of the working folder, kept by the provider
until :meth:`BubblewrapProvider.drop_snapshot` or ``close``. ``user`` is always the sandbox's
unprivileged uid (there is no root inside).
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.sandboxes import (
    ExecResult,
    ResourceLimits,
    RunningSandbox,
    SandboxInfraError,
    SandboxProvider,
    SandboxUnsupported,
)

from ._harbor_sandbox import EpisodeSandbox
from ._namespace_sandbox import _remove_tree
from ._sandbox_types import SandboxLimits, SandboxUnavailable

__all__ = ["BubblewrapProvider"]

_SNAPSHOT = "bwrap-snapshot:"


class BubblewrapProvider(SandboxProvider):
    """Bubblewrap sandboxes on this machine (no images, no build; snapshots copy the working folder)."""

    name = "bwrap"
    capabilities = frozenset({"snapshot"})

    def __init__(self) -> None:
        self._snapshots: dict[str, str] = {}
        self._folder: str | None = None

    def check(self) -> None:
        probe = EpisodeSandbox(workdir="/app")
        try:
            probe.check()
        except SandboxUnavailable as exc:
            raise SandboxInfraError(str(exc)) from None
        finally:
            probe.close()

    def create(
        self,
        *,
        image: str | None = None,
        build: Any = None,
        limits: ResourceLimits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> BubblewrapBox:
        if build is not None or (image and not image.startswith(_SNAPSHOT)):
            raise SandboxUnsupported("the bwrap provider runs on the host's /usr: it takes no image or build context")
        if network:
            raise SandboxUnsupported("the bwrap provider has no network to give a sandbox")
        box = BubblewrapBox(self, workdir or "/app", limits or ResourceLimits(), dict(env or {}))
        if image:
            source = self._snapshots.get(image)
            if source is None:
                box.destroy()
                raise SandboxInfraError(f"no snapshot {image!r} of this bwrap provider (dropped, or another process)")
            with box.stages.measure("start"):
                shutil.copytree(source, box.episode.workspace, symlinks=True, dirs_exist_ok=True)
        return box

    def keep(self, workspace: str) -> str:
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="rolloutgym-bwrap-snapshots-")
        reference = f"{_SNAPSHOT}{secrets.token_hex(6)}"
        copy = os.path.join(self._folder, reference.split(":", 1)[1])
        shutil.copytree(workspace, copy, symlinks=True)
        self._snapshots[reference] = copy
        return reference

    def drop_snapshot(self, reference: str) -> None:
        folder = self._snapshots.pop(reference, None)
        if folder is not None:
            _remove_tree(folder)

    def close(self) -> None:
        for reference in list(self._snapshots):
            self.drop_snapshot(reference)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class BubblewrapBox(RunningSandbox):
    """One sandbox of :class:`BubblewrapProvider`: a working folder and a fresh bubblewrap run per exec."""

    provider = "bwrap"

    def __init__(self, owner: BubblewrapProvider, workdir: str, limits: ResourceLimits, env: dict[str, str]) -> None:
        super().__init__()
        self._owner = owner
        with self.stages.measure("create"):
            self.episode = EpisodeSandbox(workdir=workdir)
        self.id, self.workdir = os.path.basename(self.episode.root), self.episode.workdir
        self.limits, self.env = limits, env
        self._destroyed = False

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
        if workdir and workdir != self.workdir:
            argv = ["/bin/sh", "-c", 'cd "$0" && exec "$@"', workdir, *argv]
        if stdin is not None:
            name = f".rolloutgym-stdin-{secrets.token_hex(4)}"
            self.write_files({name: stdin}, self.workdir)
            argv = ["/bin/sh", "-c", f'exec "$@" < {self.workdir}/{name}', "sh", *argv]
        seconds = max(0.1, float(timeout))
        limits = SandboxLimits(
            wall_seconds=seconds,
            cpu_seconds=max(1, int(seconds) + 1),
            memory_bytes=self.limits.memory_bytes,
            processes=self.limits.pids,
            open_files=self.limits.open_files,
            keep_output_bytes=max_output_bytes,
        )
        stage = self.stages.measure("first_exec") if "first_exec" not in self.stages else _Nothing()
        with stage:
            result = self.episode.run(argv, files={}, limits=limits, environment={**self.env, **(env or {})})
        return ExecResult(
            exit_code=-9 if result.timed_out else result.exit_code,
            output=result.output,
            timed_out=result.timed_out,
            output_truncated=result.output_truncated,
            duration=result.duration,
        )

    def _relative(self, path: str) -> str | None:
        prefix = self.workdir.rstrip("/") + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None

    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        base = self._relative(dest.rstrip("/") + "/") if dest.rstrip("/") != self.workdir else ""
        if base is None:
            raise SandboxUnsupported(f"the bwrap provider writes under its working directory {self.workdir} only")
        self.episode.seed({f"{base}{path}" if base else path: data for path, data in files.items()})

    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for path in paths:
            relative = self._relative(os.path.normpath(path))
            data = _read_no_links(self.episode.workspace, relative, max_bytes) if relative else None
            if data is not None:
                found[path] = data
        return found

    def snapshot(self) -> str:
        return self._owner.keep(self.episode.workspace)

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        with self.stages.measure("destroy"):
            self.episode.close()


def _read_no_links(root: str, relative: str, max_bytes: int) -> bytes | None:
    """The regular file at ``root/relative``, every component opened without following a link."""
    parts = [part for part in relative.split("/") if part]
    if not parts or ".." in parts:
        return None
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EACCES):
                    return None
                raise
            os.close(directory)
            directory = inner
        try:
            descriptor = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EACCES):
                return None
            raise
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            os.close(descriptor)
            return None
        with os.fdopen(descriptor, "rb") as handle:
            return handle.read(max_bytes)
    finally:
        os.close(directory)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
