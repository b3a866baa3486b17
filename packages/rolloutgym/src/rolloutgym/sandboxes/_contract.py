"""The sandbox contract: a provider creates sandboxes; a sandbox execs, copies files, snapshots, is destroyed.

Kept free of any backend: the ``docker`` provider (:mod:`rolloutgym.sandboxes.docker`), the
namespace providers of ``rolloutgym-code`` (``bwrap``) and remote services implement it.
"""

from __future__ import annotations

import hashlib
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from rolloutgym_protocol.errors import SandboxError

__all__ = [
    "BuildContext",
    "ExecResult",
    "ResourceLimits",
    "RunningSandbox",
    "SandboxInfraError",
    "SandboxProvider",
    "SandboxUnsupported",
    "StageTimes",
]

LABEL = "io.rolloutgym.sandbox"  # on everything a provider creates: the reaper removes what carries it


class SandboxInfraError(SandboxError):
    """The sandbox's infrastructure failed (engine down, image missing, build failed, quota, a sandbox
    that died): the episode is an error, never a reward of 0. The message is one line naming the fix."""


class SandboxUnsupported(SandboxError):
    """The provider cannot do this (a snapshot on a backend without one, an image on bubblewrap)."""


@dataclass(frozen=True)
class ResourceLimits:
    """Limits of one sandbox, held by the backend (cgroups for containers; rlimits for bubblewrap).

    Attributes:
        cpus: CPU share (1.0 = one core).
        memory_bytes: memory limit (swap included, where the backend can).
        pids: the most processes and threads at once.
        disk_bytes: the writable filesystem's size where the backend can bound it (a tmpfs
            workspace on containers; ``None`` leaves the backend's default).
        open_files: RLIMIT_NOFILE.
    """

    cpus: float = 1.0
    memory_bytes: int = 1 << 30
    pids: int = 256
    disk_bytes: int | None = 256 << 20
    open_files: int = 1024

    def __post_init__(self) -> None:
        for name in ("cpus", "memory_bytes", "pids", "open_files"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ResourceLimits.{name} must be positive, got {getattr(self, name)!r}")
        if self.disk_bytes is not None and self.disk_bytes <= 0:
            raise ValueError(f"ResourceLimits.disk_bytes must be positive or None, got {self.disk_bytes!r}")


@dataclass(frozen=True)
class BuildContext:
    """A folder with a Dockerfile, built into an image (cached by :meth:`digest`).

    Attributes:
        path: the build context folder.
        dockerfile: the Dockerfile's path inside it.
        image_map: ``FROM`` rewrites (``{"python:3.11-slim": "localhost/rolloutgym/python:3.11"}``)
            so a context builds offline against local images (``--image-map``).
    """

    path: Path
    dockerfile: str = "Dockerfile"
    image_map: Mapping[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        """A content hash of every file of the context (names, modes, bytes) and the image map."""
        hasher = hashlib.sha256()
        root = Path(self.path)
        for file in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
            relative = file.relative_to(root).as_posix()
            hasher.update(relative.encode() + b"\0")
            if file.is_symlink():
                hasher.update(b"L" + os.readlink(file).encode() + b"\0")
                continue
            hasher.update(oct(file.stat().st_mode & 0o777).encode() + b"\0")
            hasher.update(hashlib.sha256(file.read_bytes()).digest())
        hasher.update(self.dockerfile.encode() + b"\0")
        for source, target in sorted(self.image_map.items()):
            hasher.update(f"{source}={target}\0".encode())
        return hasher.hexdigest()[:24]


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command in a sandbox.

    Attributes:
        exit_code: the command's status; ``-9`` when the deadline killed it.
        output: stdout and stderr as they came, decoded as UTF-8 (invalid bytes replaced), capped.
        timed_out: it ran past its deadline and was killed.
        output_truncated: it wrote more than was kept.
        duration: wall-clock seconds.
    """

    exit_code: int
    output: str
    timed_out: bool = False
    output_truncated: bool = False
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def describe(self) -> str:
        """One line: ``exit status 0``, ``killed after the 5.0 s deadline``, ..."""
        if self.timed_out:
            return f"killed after the {self.duration:.1f} s deadline"
        if self.exit_code in (137, -9):
            return "killed (SIGKILL: often the memory or process limit)"
        return f"exit status {self.exit_code}"


class StageTimes(dict[str, float]):
    """Seconds per start-up stage (``build``, ``create``, ``start``, ``first_exec``, ``destroy``)."""

    @contextmanager
    def measure(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self[stage] = round(self.get(stage, 0.0) + time.perf_counter() - start, 6)


class RunningSandbox(ABC):
    """One created sandbox. Destroy it (or use it as a context manager); destroying twice is a no-op.

    Attributes:
        provider: the provider's name.
        id: the backend's id for it.
        image: the image it runs (``""`` where the backend has none).
        workdir: the working directory commands start in.
        stages: seconds per start-up stage, for the run file.
    """

    provider: str = ""
    id: str = ""
    image: str = ""
    workdir: str = "/"

    def __init__(self) -> None:
        self.stages = StageTimes()

    @abstractmethod
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
        """Run ``command`` (a string runs under ``/bin/sh -c``) and wait for it at most ``timeout`` s.

        ``user`` overrides the sandbox's user (``"root"`` for set-up steps); the default is the
        unprivileged user the sandbox was created with. Past ``timeout`` the command's processes
        are killed and the result says ``timed_out``.
        """

    @abstractmethod
    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        """Copy ``files`` (relative POSIX path to bytes) into the folder ``dest`` (created if needed),
        owned by ``user`` (the sandbox's user by default)."""

    @abstractmethod
    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        """The regular files among ``paths`` (absolute, in the sandbox), never through a symlink;
        missing ones (and links, folders, files past ``max_bytes``) are left out."""

    def snapshot(self) -> str:
        """Freeze the sandbox's filesystem; the returned reference is an ``image=`` for ``create``."""
        raise SandboxUnsupported(f"the {self.provider or 'this'} provider cannot snapshot a sandbox")

    @abstractmethod
    def destroy(self) -> None:
        """Remove the sandbox and everything it holds (idempotent)."""

    def __enter__(self) -> RunningSandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.destroy()


class SandboxProvider(ABC):
    """Creates sandboxes on one backend.

    Attributes:
        name: the provider's name (``docker``, ``bwrap``, ...).
        capabilities: what it can do beyond exec and copy: ``image``, ``build``, ``snapshot``, ``network``.
    """

    name: str = ""
    capabilities: frozenset[str] = frozenset()

    def check(self) -> None:
        """Raise :class:`SandboxInfraError` (one line: what is wrong and the fix) when it cannot run here."""
        return None

    @abstractmethod
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
    ) -> RunningSandbox:
        """A started sandbox from ``image`` or from ``build`` (built first, cached by its digest).

        ``network=False`` gives it no network. ``user`` is who its commands run as (the provider's
        unprivileged user by default). ``labels`` are added to the provider's own.
        """

    def build(self, context: BuildContext) -> str:
        """Build ``context`` (cached by its digest) and return the image reference."""
        raise SandboxUnsupported(f"the {self.name or 'this'} provider cannot build images")

    def drop_snapshot(self, reference: str) -> None:
        """Remove a snapshot made by a sandbox of this provider (idempotent; others are left alone)."""
        return None

    def reap(self) -> int:
        """Remove what killed runs left behind (found by label); the number removed."""
        return 0

    def close(self) -> None:
        """Release the provider's connections and pools (its sandboxes are destroyed by their owners)."""
        return None

    def __enter__(self) -> SandboxProvider:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
