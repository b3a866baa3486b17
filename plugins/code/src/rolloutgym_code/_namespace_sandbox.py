"""The shared machinery of the Linux-namespace sandbox providers: ``bwrap`` (bubblewrap,
:mod:`rolloutgym_code._bwrap_sandbox`) and ``unshare`` (fallback, root only,
:mod:`rolloutgym_code._unshare_sandbox`); what they show of the host is in
:mod:`rolloutgym_code._mount_plan`.

Both write the files into a fresh scratch directory, run the command there through
``prlimit`` (rlimits) and, when we are root, ``setpriv`` (drop to an unprivileged uid, so
that RLIMIT_NPROC applies; root ignores it), and delete the scratch directory afterwards.

The uid: a process that is root ignores RLIMIT_NPROC, so as root every run gets its own
unprivileged uid from a large unused range (``ROLLOUTGYM_SANDBOX_UID_BASE``, default
1,000,000). Distinct uids keep concurrent runs from sharing one process count, so a fork
bomb in one rollout cannot starve its neighbours. When we are not root the run keeps our
uid inside a new user namespace (bubblewrap), where the process count starts afresh.

The interpreter: ``ROLLOUTGYM_SANDBOX_PYTHON``, default Debian's ``/usr/bin/python3``
(apt packages ``python3`` and ``python3-pytest``). It must be readable by the unprivileged
uid; an interpreter under root's home (pyenv) is not, and is refused with that reason.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._paths import check_relative_path, read_regular_file
from ._process import run_bounded
from ._sandbox_types import SandboxLimits, SandboxResult, SandboxUnavailable

__all__ = [
    "TRUSTED_DIR",
    "NamespaceSandbox",
    "SandboxProcess",
]

DEFAULT_PYTHON = "/usr/bin/python3"
TRUSTED_DIR = "/rolloutgym-trusted"
_UID_SPAN = 500_000
_counter = itertools.count()
_checked: dict[tuple[str, str], str | None] = {}


def _sandbox_environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "TMPDIR": "/tmp",
    }
    environment.update(extra or {})
    return environment


def _readable_by_others(path: str) -> str | None:
    """Why an unprivileged uid could not execute ``path`` (None when it can)."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return f"{path} does not exist"
    current = Path(real)
    mode = current.stat().st_mode
    if not (mode & stat.S_IROTH and mode & stat.S_IXOTH):
        return f"{real} is not readable and executable by other users"
    for parent in current.parents:
        if not parent.stat().st_mode & stat.S_IXOTH:
            return f"{parent} cannot be entered by other users (mode {stat.filemode(parent.stat().st_mode)})"
    return None


def _remove_tree(path: str) -> None:
    def retry(function: object, failed: str, _excinfo: object) -> None:
        # A test may leave read-only directories behind; make them writable and retry.
        try:
            os.chmod(os.path.dirname(failed), 0o700)
            os.chmod(failed, 0o700)
        except OSError:
            pass
        if os.path.isdir(failed) and not os.path.islink(failed):
            shutil.rmtree(failed, ignore_errors=True)
        else:
            try:
                os.unlink(failed)
            except OSError:
                pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


class NamespaceSandbox:
    """Shared machinery of the namespace providers; subclasses build the launcher command line."""

    name = "namespace"
    workdir = "/workspace"
    trusted_dir = TRUSTED_DIR

    def __init__(self, *, python: str | None = None, limits: SandboxLimits | None = None) -> None:
        self.python = python or os.environ.get("ROLLOUTGYM_SANDBOX_PYTHON") or DEFAULT_PYTHON
        self.limits = limits or SandboxLimits()
        self.as_root = os.geteuid() == 0
        self.uid_base = int(os.environ.get("ROLLOUTGYM_SANDBOX_UID_BASE", "1000000"))

    # -- what subclasses provide --------------------------------------------------------

    def _launcher(self, scratch: str, limits: SandboxLimits, collect: Sequence[str]) -> list[str]:
        """The command line that enters the sandbox; ``scratch`` holds ``work/`` and ``trusted/``."""
        raise NotImplementedError

    def _entry(self, collect: Sequence[str]) -> list[str]:
        """What runs inside the sandbox, after the rlimits and the uid drop, before the command."""
        return []

    def _requirements(self) -> str | None:
        """Why this provider cannot run here (None when it can)."""
        raise NotImplementedError

    # -- public API ---------------------------------------------------------------------

    def check(self) -> None:
        """Raise :class:`SandboxUnavailable` unless a trivial command runs in this sandbox."""
        key = (self.name, self.python)
        if key not in _checked:
            _checked[key] = self._diagnose()
        problem = _checked[key]
        if problem is not None:
            raise SandboxUnavailable(problem)

    def _diagnose(self) -> str | None:
        problem = self._requirements()
        if problem:
            return problem
        if self.as_root:
            unreadable = _readable_by_others(self.python)
            if unreadable:
                return (
                    f"the sandbox interpreter {self.python} cannot be run by the unprivileged sandbox uid: "
                    f"{unreadable}. "
                    "Install Debian's python3 and python3-pytest (apt-get install python3 python3-pytest) or set "
                    "ROLLOUTGYM_SANDBOX_PYTHON to an interpreter outside root's home"
                )
        elif not os.path.isfile(os.path.realpath(self.python)):
            return (
                f"the sandbox interpreter {self.python} does not exist; "
                "install python3 or set ROLLOUTGYM_SANDBOX_PYTHON"
            )
        result = self.run(
            [self.python, "-c", "import pytest; print('sandbox-ok')"], files={}, limits=SandboxLimits(wall_seconds=20)
        )
        if "sandbox-ok" not in result.output:
            return (
                f"a smoke test in the {self.name} sandbox failed ({result.describe()}): "
                f"{result.output.strip()[:400]!r}. "
                f"The interpreter {self.python} needs pytest (apt-get install python3-pytest)"
            )
        return None

    def run(
        self,
        command: Sequence[str],
        *,
        files: Mapping[str, bytes],
        limits: SandboxLimits | None = None,
        collect: Sequence[str] = (),
        environment: Mapping[str, str] | None = None,
        trusted_files: Mapping[str, bytes] | None = None,
    ) -> SandboxResult:
        """See :meth:`rolloutgym_code.sandbox.Sandbox.run`."""
        limits = limits or self.limits
        for name in collect:
            if "/" in name or name in ("", ".", "..") or "\n" in name:
                raise ValueError(f"collect names top-level files only, got {name!r}")
        scratch = tempfile.mkdtemp(prefix="rolloutgym-sandbox-")
        try:
            argv = self._prepare(scratch, command, files, limits, collect, trusted_files)
            outcome = run_bounded(
                argv,
                environment=_sandbox_environment(environment),
                cwd=scratch,
                timeout=limits.wall_seconds,
                keep_output_bytes=limits.keep_output_bytes,
                max_output_bytes=limits.max_output_bytes,
            )
            collected = {
                name: data
                for name in collect
                if (data := read_regular_file(os.path.join(scratch, "work"), name)) is not None
            }
        finally:
            _remove_tree(scratch)
        exit_code = outcome.exit_code
        if 128 < exit_code < 128 + 65:  # the launcher reports "killed by signal N" as 128+N
            exit_code = 128 - exit_code
        return SandboxResult(
            exit_code=exit_code,
            output=outcome.output.decode("utf-8", errors="replace"),
            output_truncated=outcome.output_bytes > len(outcome.output),
            timed_out=outcome.timed_out,
            output_limit_exceeded=outcome.output_limit_exceeded,
            duration=outcome.duration,
            files=collected,
            sandbox=self.name,
        )

    def start(
        self,
        command: Sequence[str],
        *,
        files: Mapping[str, bytes],
        limits: SandboxLimits | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> SandboxProcess:
        """Start ``command`` like :meth:`run` does, with a pipe to its stdin and one from its
        stdout (for a conversation with it), and return at once; :meth:`SandboxProcess.close`
        kills it and removes its files. Its stderr is kept (the first 4 KiB) for diagnostics."""
        import subprocess

        limits = limits or self.limits
        scratch = tempfile.mkdtemp(prefix="rolloutgym-sandbox-")
        try:
            argv = self._prepare(scratch, command, files, limits, (), None)
            errors = open(os.path.join(scratch, "stderr"), "w+b")  # noqa: SIM115 - closed by SandboxProcess
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=_sandbox_environment(environment),
                cwd=scratch,
                close_fds=True,
                start_new_session=True,
            )
        except BaseException:
            _remove_tree(scratch)
            raise
        return SandboxProcess(process, scratch, errors)

    def _prepare(
        self,
        scratch: str,
        command: Sequence[str],
        files: Mapping[str, bytes],
        limits: SandboxLimits,
        collect: Sequence[str],
        trusted_files: Mapping[str, bytes] | None,
    ) -> list[str]:
        """Fill ``scratch`` (``work/``, ``trusted/``) and return the full command line."""
        os.chmod(scratch, 0o711)
        work = os.path.join(scratch, "work")
        os.mkdir(work, 0o755)
        trusted = os.path.join(scratch, "trusted")
        os.mkdir(trusted, 0o755)
        uid = self._uid()
        self._write_files(work, files, uid)
        # Trusted files stay owned by us and are mounted read-only: the code cannot change them.
        self._write_files(trusted, trusted_files or {}, None)
        return [
            *self._launcher(scratch, limits, collect),
            *self._drop_privileges(uid, limits),
            *self._entry(collect),
            *command,
        ]

    # -- helpers ------------------------------------------------------------------------

    def _uid(self) -> int | None:
        if not self.as_root:
            return None
        return self.uid_base + (os.getpid() * 7919 + next(_counter)) % _UID_SPAN

    def _write_files(self, work: str, files: Mapping[str, bytes], uid: int | None) -> None:
        for name, data in files.items():
            relative = check_relative_path(name)
            target = os.path.join(work, *relative.parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data if isinstance(data, bytes) else str(data).encode("utf-8"))
        if uid is not None:
            for directory, _subdirectories, names in os.walk(work):
                os.chown(directory, uid, uid)
                for entry in names:
                    os.chown(os.path.join(directory, entry), uid, uid)

    def _drop_privileges(self, uid: int | None, limits: SandboxLimits) -> list[str]:
        rlimits = [
            "/usr/bin/prlimit",
            f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",  # SIGXCPU first, SIGKILL a second later
            f"--as={limits.memory_bytes}",
            f"--nproc={limits.processes}",
            f"--fsize={limits.file_size_bytes}",
            f"--nofile={limits.open_files}",
            "--core=0",
            "--",
        ]
        if uid is None:
            return rlimits
        drop = [
            "/usr/bin/setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--bounding-set=-all",
            "--inh-caps=-all",
            "--",
        ]
        return rlimits + drop


class SandboxProcess:
    """A command running in a sandbox (from :meth:`NamespaceSandbox.start`).

    Attributes:
        to_sandbox: the descriptor that writes to its stdin.
        from_sandbox: the descriptor that reads its stdout.
    """

    def __init__(self, process: Any, scratch: str, errors: Any) -> None:
        self._process, self._scratch, self._errors = process, scratch, errors
        self.to_sandbox: int = process.stdin.fileno()
        self.from_sandbox: int = process.stdout.fileno()

    def release_channel(self) -> None:
        """Close this process's ends of the pipes (once another process holds them)."""
        for stream in (self._process.stdin, self._process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> str:
        """Kill the command and everything it started, remove its files, and return the
        first 4 KiB of its stderr."""
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._process.wait()
        self.release_channel()
        try:
            self._errors.seek(0)
            text = self._errors.read(4096).decode("utf-8", "replace")
        finally:
            self._errors.close()
            _remove_tree(self._scratch)
        return text
