"""The sandbox contract: what a provider implements and what it takes and returns.

Kept apart from :mod:`rolloutgym_code.sandbox` (which re-exports every name here) so that
the providers can import the contract while the registry imports the providers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from rolloutgym_protocol.errors import SandboxError

__all__ = ["Sandbox", "SandboxLimits", "SandboxResult", "SandboxUnavailable"]


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
        workspace_bytes: size of the workspace: it is a private tmpfs of this size, filled
            with the command's files, so a run cannot fill the host's disk (with bubblewrap
            and ``collect``, the workspace is a host folder bounded per file by
            ``file_size_bytes`` only).
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
    workspace_bytes: int = 256 << 20

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
            "workspace_bytes",
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
