"""Run a command that a less trusted party chose as an unprivileged user, on an allow-listed filesystem.

For a trusted process (a platform worker) that must execute code it did not write: a pushed env
file, a policy that runs a command, an MCP server's command. :func:`run_isolated` starts the
command in bubblewrap with

* new PID, network (loopback only), IPC, UTS and cgroup namespaces; the process dies with its
  parent, and every process it started dies with it;
* an empty root: ``/usr`` (and the ``/bin``, ``/lib`` links) and the few ``/etc`` files the
  dynamic loader reads, read-only; with ``python=True`` this interpreter, its virtual environment
  and the folders of its import path, read-only; a fresh ``/dev``, ``/proc`` (its own processes
  only) and a size-limited ``/tmp``; the :class:`Isolation`'s read-only paths; and one writable
  folder. Nothing else of the host is there: not the caller's data folder, database file, home
  folder or credentials. A ``hidden`` path is masked even where it lies inside a folder that is
  bound (a data folder inside the source tree, say);
* no inherited environment variable: only :data:`BASE_ENVIRONMENT` and the isolation's own;
* rlimits (processes, file size, open files, no core files) and, when the caller is root, a
  fresh unprivileged uid (``setpriv``; drawn from ``ROLLOUTGYM_SANDBOX_UID_BASE``, default
  1,000,000, plus up to 500,000): a process that is root ignores ``RLIMIT_NPROC``, and files the
  caller can read as root are closed to the sandbox unless other users may read them. The
  writable folder is handed to that uid. When the caller is not root, the command keeps the
  caller's uid inside a new user namespace.

When the caller is root, the interpreter, its import path and the read-only paths must be readable
by other users (an interpreter under a mode-700 home folder is refused with that reason, never run
as root instead); a caller that is not root keeps its uid, so what it can read is enough.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._contract import SandboxInfraError

__all__ = ["BASE_ENVIRONMENT", "Isolation", "IsolatedResult", "isolated_argv", "isolation_problem", "run_isolated"]

BASE_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "USER": "sandbox",
    "LOGNAME": "sandbox",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}
"""The only environment a sandboxed command starts with (plus :attr:`Isolation.environment`)."""

_UID_SPAN = 500_000
_FORWARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_forward.py")
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")


@dataclass(frozen=True)
class Isolation:
    """What a sandboxed command sees and may use.

    Attributes:
        writable: the one writable host folder (given to the sandbox's uid); also the working folder.
        read_only: more host folders or files, visible read-only at their own paths.
        hidden: host paths that stay invisible even inside a bound folder.
        environment: variables besides :data:`BASE_ENVIRONMENT`; nothing is inherited.
        python: bind this interpreter, its virtual environment and its import path (read-only).
        processes: RLIMIT_NPROC of the sandbox's uid.
        file_size_bytes: the largest file it may write; tmp_bytes: the size of its ``/tmp``.
        forward: ``(port, host Unix socket)`` pairs: the sandbox's ``127.0.0.1:port`` is relayed to that socket
            (a :class:`~rolloutgym.sandboxes.CredentialProxy`): the one service it may reach.
    """

    writable: Path
    read_only: Sequence[Path] = ()
    hidden: Sequence[Path] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    python: bool = True
    processes: int = 512
    file_size_bytes: int = 2 << 30
    open_files: int = 1024
    tmp_bytes: int = 256 << 20
    forward: Sequence[tuple[int, str]] = ()


@dataclass(frozen=True)
class IsolatedResult:
    """How a sandboxed command ended: its exit status (negative: the signal) and the end of its stderr."""

    returncode: int
    stderr_tail: str


def isolation_problem() -> str | None:
    """Why commands cannot be isolated on this machine (None when they can), with the fix."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if os.geteuid() == 0:
        missing = [tool for tool in ("/usr/bin/setpriv", "/usr/bin/prlimit") if not os.access(tool, os.X_OK)]
        if missing:
            return f"{' and '.join(missing)} missing (apt-get install util-linux)"
    elif not os.access("/usr/bin/prlimit", os.X_OK):
        return "/usr/bin/prlimit missing (apt-get install util-linux)"
    return None


def _is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _unreadable(path: str) -> str | None:
    """Why other users cannot read ``path`` (a bound root: its own mode and what is inside is what counts)."""
    mode = os.stat(path).st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    if mode & needed != needed:
        return f"{path} is not readable by other users (mode {stat.filemode(mode)})"
    return None


def python_roots() -> list[str]:
    """The host folders this interpreter needs: its base prefix, its virtual environment, its import path
    (the current folder and the script's folder left out)."""
    roots: list[str] = []
    skip = {"", os.getcwd()}
    for entry in [sys.base_prefix, sys.prefix, *sys.path]:
        if entry in skip or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if not any(_is_under(real, root) for root in roots):
            roots = [root for root in roots if not _is_under(root, real)] + [real]
    return sorted(roots)


def _interpreter_check(roots: Sequence[str]) -> None:
    executable = os.path.realpath(sys.executable)
    problem = next((p for p in (_unreadable(root) for root in roots) if p), None)
    mode = os.stat(executable).st_mode
    if problem is None and mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
        problem = f"{executable} is not executable by other users"
    if problem is not None:
        raise SandboxInfraError(
            f"the sandbox cannot run this Python as an unprivileged user: {problem}; install Python and the "
            "packages where other users may read them (chmod o+rX), e.g. under /opt or /usr"
        )


def _system_binds() -> list[str]:
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    for path in _ETC:
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    return arguments


def _inside(path: str | Path, folders: Sequence[str]) -> bool:
    return any(_is_under(os.path.realpath(path), folder) for folder in folders)


def _masks(hidden: Sequence[Path], roots: Sequence[str]) -> list[str]:
    """Cover each hidden path that a bound root would show: an empty folder, or /dev/null for a file."""
    arguments: list[str] = []
    for path in sorted({os.path.realpath(p) for p in hidden}):
        if not any(_is_under(path, root) for root in roots) or not os.path.exists(path):
            continue
        arguments += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    return arguments


def _limits(isolation: Isolation, uid: int | None) -> list[str]:
    arguments = [
        "/usr/bin/prlimit",
        f"--nproc={isolation.processes}",
        f"--fsize={isolation.file_size_bytes}",
        f"--nofile={isolation.open_files}",
        "--core=0",
        "--",
    ]
    if uid is not None:
        arguments += [
            "/usr/bin/setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--bounding-set=-all",
            "--inh-caps=-all",
            "--",
        ]
    return arguments


def _uid() -> int | None:
    if os.geteuid() != 0:
        return None
    base = int(os.environ.get("ROLLOUTGYM_SANDBOX_UID_BASE", "1000000"))
    return base + secrets.randbelow(_UID_SPAN)


class _Binds:
    """Bind arguments in order, each target's missing parent folders made first (mode 755: bubblewrap makes
    them 700, which an unprivileged uid cannot enter)."""

    def __init__(self) -> None:
        self.arguments: list[str] = []
        self.made: set[str] = {"/"}
        self.bound: list[str] = []

    def add(self, option: str, source: str, target: str) -> None:
        for parent in reversed(Path(target).parents):
            folder = str(parent)
            if folder not in self.made and not any(_is_under(folder, root) for root in self.bound):
                self.arguments += ["--perms", "0755", "--dir", folder]
                self.made.add(folder)
        self.arguments += [option, source, target]
        self.bound.append(target)


def isolated_argv(argv: Sequence[str], isolation: Isolation, uid: int | None = None) -> list[str]:
    """The command line that runs ``argv`` isolated (``uid``: the sandbox's, when the caller is root)."""
    problem = isolation_problem()
    if problem is not None:
        raise SandboxInfraError(f"cannot isolate the command: {problem}")
    writable = os.path.realpath(isolation.writable)
    roots = python_roots() if isolation.python else []
    if roots and uid is not None:  # a caller that is not root keeps its own uid: what it can read is there
        _interpreter_check(roots)
    arguments = [shutil.which("bwrap") or "bwrap"]
    if os.geteuid() != 0:
        arguments += ["--unshare-user", "--disable-userns"]
    arguments += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    arguments += ["--die-with-parent", "--new-session", "--hostname", "sandbox", *_system_binds()]
    arguments += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--size", str(isolation.tmp_bytes)]
    arguments += ["--tmpfs", "/tmp"]
    binds = _Binds()
    binds.bound += ["/usr", "/dev", "/proc"]
    for root in roots:
        binds.add("--ro-bind", root, root)
    given = [os.path.realpath(p) for p in isolation.read_only]
    # a hidden path inside the interpreter's folders is covered before the given paths are bound (which may lie
    # inside it, e.g. one env folder of a hidden data folder); one inside a given path after it
    binds.arguments += _masks([p for p in isolation.hidden if not _inside(p, given)], [*roots, "/usr"])
    for path in isolation.read_only:
        real = os.path.realpath(path)
        problem = _unreadable(real) if uid is not None else None
        if problem is not None:
            raise SandboxInfraError(f"the sandbox's uid could not read what it is given: {problem} (chmod o+rX)")
        binds.add("--ro-bind", real, real)
    binds.arguments += _masks([p for p in isolation.hidden if _inside(p, given)], given)
    relays: list[str] = []
    for port, socket_path in isolation.forward:
        real = os.path.realpath(socket_path)
        binds.add("--bind", real, real)
        relays += [sys.executable, "-I", "-S", _FORWARD, real, str(int(port))]
    binds.add("--bind", writable, writable)
    arguments += binds.arguments + ["--remount-ro", "/", "--chdir", writable, "--"]
    return arguments + _limits(isolation, uid) + relays + list(argv)


def _hand_over(folder: str, uid: int | None) -> None:
    """Give the writable folder (and what is in it) to the sandbox's uid."""
    if uid is None:
        return
    for directory, _folders, names in os.walk(folder):
        os.chown(directory, uid, uid)
        for name in names:
            os.chown(os.path.join(directory, name), uid, uid, follow_symlinks=False)


def run_isolated(
    argv: Sequence[str],
    isolation: Isolation,
    *,
    input: bytes | None = None,
    pass_fds: Sequence[int] = (),
    timeout: float | None = None,
    stop: Callable[[], bool] | None = None,
) -> IsolatedResult:
    """Run ``argv`` isolated (:class:`Isolation`) and wait for it; its stdout is discarded, ``pass_fds`` are
    inherited (a pipe for results), stderr's last 4,000 characters come back. A missing tool is a
    :class:`SandboxInfraError` naming the fix; ``timeout`` passed, or ``stop()`` true (asked every half
    second), kills the whole sandbox."""
    os.makedirs(isolation.writable, exist_ok=True)
    uid = _uid()
    command = isolated_argv(argv, isolation, uid)
    _hand_over(os.path.realpath(isolation.writable), uid)
    environment = {**BASE_ENVIRONMENT, **isolation.environment}
    stderr_path = Path(isolation.writable).with_name(Path(isolation.writable).name + ".stderr")
    with open(stderr_path, "w+b") as stderr:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=environment,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
        if input is not None:
            threading.Thread(target=_feed, args=(process, input), daemon=True).start()
        _wait(process, timeout, stop)
        stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, stderr.tell() - 4000))
        tail = stderr.read().decode("utf-8", errors="replace")
    stderr_path.unlink(missing_ok=True)
    return IsolatedResult(process.returncode, tail)


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(data)
        process.stdin.close()
    except OSError:
        pass  # it ended before reading all of it


def _wait(process: subprocess.Popen[bytes], timeout: float | None, stop: Callable[[], bool] | None) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            process.wait(timeout=0.5)
            return
        except subprocess.TimeoutExpired:
            if (deadline is not None and time.monotonic() > deadline) or (stop is not None and stop()):
                process.kill()  # bubblewrap; --die-with-parent and the PID namespace end everything inside
                process.wait()
                return
