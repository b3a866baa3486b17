"""Sandboxes that run untrusted code: visible tests, hidden tests, anything the agent runs.

A sandbox is a *provider*: an object with ``run(command, files=..., limits=...)`` that ships
a set of files in, runs one command with them as its working directory, and returns a
:class:`SandboxResult` (exit code, capped output, limit flags, and the files asked for with
``collect``). Nothing the command writes reaches the caller except those collected files.
That small contract is all a container or remote sandbox has to implement; register one
with :func:`register_sandbox` or an entry point in group ``rolloutgym_code.sandboxes``.
A provider may also accept ``trusted_files=`` (files mounted read-only at its
``trusted_dir``, next to its ``workdir``): test runs then keep hidden tests out of the code's
reach; without it they travel inside the workspace.

The local providers (in :mod:`rolloutgym_code._local`):

* ``bwrap`` (preferred): bubblewrap with new network, PID, IPC and UTS namespaces, an empty
  root with read-only ``/usr`` (and the interpreter's prefix) bound in, a fresh size-limited
  ``/tmp``, the workspace as the only writable host directory, rlimits, a scrubbed
  environment and an unprivileged uid.
* ``unshare`` (fallback, needs root): ``unshare`` network/PID/mount/IPC/UTS namespaces and
  a private root like bubblewrap's (read-only ``/usr``, fresh ``/proc`` and ``/tmp``, the
  workspace), entered with ``chroot``; rlimits and a uid drop.

``get_sandbox("auto")`` picks ``bwrap`` when it works, else ``unshare`` when running as
root, else raises :class:`SandboxUnavailable` saying what to install.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from rolloutgym_protocol.errors import SandboxError

__all__ = [
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "available_sandboxes",
    "get_sandbox",
    "register_sandbox",
]


class SandboxUnavailable(SandboxError):
    """No sandbox of the requested kind can run on this machine (the message says what to install)."""


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed command.

    Attributes:
        wall_seconds: wall-clock limit; the whole process tree is killed when it passes.
        cpu_seconds: RLIMIT_CPU per process.
        memory_bytes: RLIMIT_AS (address space) per process.
        processes: RLIMIT_NPROC for the sandbox's own uid.
        file_size_bytes: RLIMIT_FSIZE, the largest file a process may write.
        open_files: RLIMIT_NOFILE.
        keep_output_bytes: how much of stdout+stderr is returned.
        max_output_bytes: the command is killed once it has written this much.
        tmp_bytes: size of the private ``/tmp``.
    """

    wall_seconds: float = 30.0
    cpu_seconds: int = 30
    memory_bytes: int = 1 << 30
    processes: int = 64
    file_size_bytes: int = 64 << 20
    open_files: int = 256
    keep_output_bytes: int = 64 << 10
    max_output_bytes: int = 8 << 20
    tmp_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        for name in (
            "wall_seconds",
            "cpu_seconds",
            "memory_bytes",
            "processes",
            "file_size_bytes",
            "open_files",
            "keep_output_bytes",
            "max_output_bytes",
            "tmp_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of one sandboxed command.

    Attributes:
        exit_code: the command's exit status; negative (``-signal``) when it was killed (an
            exit status of 128+N is read as "killed by signal N", as shells do).
        output: stdout and stderr together, decoded as UTF-8 (invalid bytes replaced), capped.
        output_truncated: the command wrote more than was kept.
        timed_out: it ran past ``wall_seconds`` and was killed.
        output_limit_exceeded: it wrote more than ``max_output_bytes`` and was killed.
        duration: wall-clock seconds.
        files: the collected files (name to bytes) that existed as regular files.
        sandbox: the provider's name.
    """

    exit_code: int
    output: str
    output_truncated: bool = False
    timed_out: bool = False
    output_limit_exceeded: bool = False
    duration: float = 0.0
    files: Mapping[str, bytes] = field(default_factory=dict)
    sandbox: str = ""

    @property
    def status(self) -> str:
        """``ok``, ``failed`` (non-zero exit), ``killed`` (by a signal, e.g. the CPU or file
        size limit), ``timeout`` or ``output-limit``."""
        if self.timed_out:
            return "timeout"
        if self.output_limit_exceeded:
            return "output-limit"
        if self.exit_code < 0:
            return "killed"
        return "ok" if self.exit_code == 0 else "failed"

    def describe(self) -> str:
        """One line a person (or an agent) can act on."""
        if self.timed_out:
            return f"killed after the {self.duration:.1f} s wall-clock limit"
        if self.output_limit_exceeded:
            return "killed: it wrote more output than the sandbox allows"
        if self.exit_code < 0:
            import signal

            try:
                name = signal.Signals(-self.exit_code).name
            except ValueError:
                name = f"signal {-self.exit_code}"
            hint = {
                "SIGXCPU": " (CPU time limit)",
                "SIGXFSZ": " (file size limit)",
                "SIGKILL": " (a limit was hit)",
                "SIGSEGV": " (often the memory limit)",
            }.get(name, "")
            return f"killed by {name}{hint}"
        return f"exited with status {self.exit_code}"


@runtime_checkable
class Sandbox(Protocol):
    """What a sandbox provider implements.

    Attributes:
        name: the provider's name (``bwrap``, ``unshare``, ...).
        python: the interpreter to name in commands, as seen inside the sandbox.
    """

    name: str
    python: str

    def run(
        self,
        command: Sequence[str],
        *,
        files: Mapping[str, bytes],
        limits: SandboxLimits | None = None,
        collect: Sequence[str] = (),
        environment: Mapping[str, str] | None = None,
    ) -> SandboxResult:
        """Run ``command`` with ``files`` (relative POSIX path to bytes) as its working directory.

        ``collect`` names top-level files of the working directory to return after the run
        (only regular files, never through symlinks, capped in size). ``environment`` adds
        variables to the scrubbed default environment.
        """
        ...


_PROVIDERS: dict[str, Callable[[], Sandbox]] = {}
_ENTRY_POINT_GROUP = "rolloutgym_code.sandboxes"


def register_sandbox(name: str, factory: Callable[[], Sandbox]) -> None:
    """Make ``get_sandbox(name)`` build a sandbox with ``factory()``."""
    _PROVIDERS[name] = factory


def _builtin_providers() -> dict[str, Callable[[], Sandbox]]:
    from ._local import BubblewrapSandbox, UnshareSandbox

    return {"bwrap": BubblewrapSandbox, "unshare": UnshareSandbox}


@functools.cache
def _entry_point_providers() -> dict[str, Callable[[], Sandbox]]:
    """Providers from installed distributions (read once per process: scanning is slow)."""
    from importlib.metadata import entry_points

    found: dict[str, Callable[[], Sandbox]] = {}
    for entry_point in entry_points(group=_ENTRY_POINT_GROUP):
        found[entry_point.name] = lambda entry_point=entry_point: entry_point.load()()  # type: ignore[misc]
    return found


def available_sandboxes() -> list[str]:
    """Names ``get_sandbox`` accepts (``auto`` plus every registered provider)."""
    return ["auto", *sorted({**_builtin_providers(), **_entry_point_providers(), **_PROVIDERS})]


def get_sandbox(name: str | Sandbox | None = None) -> Sandbox:
    """Return a working sandbox provider.

    Args:
        name: a provider object (returned as is), a provider name, or ``None``/``"auto"``,
            which reads ``ROLLOUTGYM_SANDBOX`` and otherwise prefers ``bwrap`` then ``unshare``.

    Raises:
        SandboxUnavailable: the provider cannot run here; the message says why and what to install.
    """
    if name is not None and not isinstance(name, str):
        return name
    chosen = name or os.environ.get("ROLLOUTGYM_SANDBOX") or "auto"
    providers = {**_builtin_providers(), **_entry_point_providers(), **_PROVIDERS}
    if chosen == "auto":
        problems = []
        for candidate in ("bwrap", "unshare"):
            try:
                return _checked(providers[candidate]())
            except SandboxUnavailable as exc:
                problems.append(f"{candidate}: {exc}")
        raise SandboxUnavailable(
            "no sandbox can run untrusted code on this machine. "
            + " | ".join(problems)
            + " | Install bubblewrap (apt-get install bubblewrap) and Debian's python3 + python3-pytest."
        )
    if chosen not in providers:
        from rolloutgym_protocol.errors import did_you_mean

        raise SandboxUnavailable(
            f"no sandbox provider {chosen!r}.{did_you_mean(chosen, providers)} Available: {', '.join(available_sandboxes())}."
        )
    return _checked(providers[chosen]())


def _checked(sandbox: Sandbox) -> Sandbox:
    check = getattr(sandbox, "check", None)
    if check is not None:
        check()
    return sandbox
