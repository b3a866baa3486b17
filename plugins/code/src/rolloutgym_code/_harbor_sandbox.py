"""The sandbox of a Harbor task: bubblewrap with a workspace that lives for the episode.

Each shell command of the agent is one run of :class:`EpisodeSandbox`: a fresh bubblewrap
sandbox (new network, PID, IPC and UTS namespaces; read-only ``/usr``; a private ``/tmp``;
rlimits; an unprivileged uid) with the episode's workspace folder bound at the task's working
directory (``/app`` by default). Files persist between commands; processes do not (the PID
namespace ends with the command). Nothing else of the host is visible: not the task folder,
not its ``tests/`` or ``solution/``.

The verifier is one more run with two extra binds the agent's runs never have: the task's
``tests/`` read-only at ``/tests`` and a fresh folder at ``/logs/verifier`` for the reward file.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._bwrap_sandbox import BubblewrapSandbox
from ._mount_plan import _is_under, _visible_roots
from ._namespace_sandbox import _remove_tree
from ._sandbox_types import SandboxLimits, SandboxResult, SandboxUnavailable

__all__ = ["EpisodeSandbox"]

# The episode's folder (workspace and verifier logs) is a tmpfs of the workspace's size plus
# this slack when the host lets us mount one (root): a command cannot put more on the host
# (RAM, not disk) than that, however fast it writes; elsewhere the size is measured after
# each command (HarborTaskEnv ends the episode past it) and RLIMIT_FSIZE bounds each file.
_SLACK = 16 << 20
_ROOT_PREFIX = "rolloutgym-harbor-"


def _mount_tmpfs(path: str, size: int) -> bool:
    result = subprocess.run(  # noqa: S603, S607
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0711,nosuid,nodev", "tmpfs", path],
        check=False,
        capture_output=True,
    )
    return result.returncode == 0


def _unmount_orphans() -> None:
    """Unmount the episode tmpfs of processes that ended without closing them."""
    base = tempfile.gettempdir().rstrip("/") + "/" + _ROOT_PREFIX
    try:
        with open("/proc/self/mounts", encoding="utf-8") as handle:
            points = [line.split()[1] for line in handle if line.split()[1].startswith(base)]
    except OSError:
        return
    for point in points:
        pid = point[len(base) :].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)  # noqa: S603, S607
            _remove_tree(point)


# Where a task's working directory may not be: the sandbox's own mounts and Harbor's trusted paths.
_RESERVED = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc", "/tmp")
_TRUSTED = ("/tests", "/logs", "/solution", "/rolloutgym-trusted", "/rolloutgym-seed")


def check_workdir(workdir: str) -> str | None:
    """Why ``workdir`` cannot be a task's working directory in the sandbox (None when it can)."""
    if not workdir.startswith("/") or "\x00" in workdir or ".." in workdir.split("/") or workdir.rstrip("/") == "":
        return f"the working directory {workdir!r} must be an absolute path such as /app"
    for reserved in _RESERVED + _TRUSTED:
        if workdir == reserved or workdir.startswith(reserved + "/"):
            return f"the working directory {workdir!r} lies under {reserved}, which the sandbox reserves"
    return None


class EpisodeSandbox(BubblewrapSandbox):
    """A bubblewrap sandbox whose workspace is a host folder kept for a whole episode.

    Args:
        workdir: where the workspace appears inside the sandbox (``/app``).
        hide: host folders to cover with an empty tmpfs should they lie under a bound
            directory (the task folder, when it is under ``/usr``).
    """

    name = "bwrap"

    def __init__(
        self,
        *,
        workdir: str = "/app",
        hide: Sequence[str] = (),
        limits: SandboxLimits | None = None,
        workspace_bytes: int | None = None,
    ) -> None:
        super().__init__(limits=limits)
        problem = check_workdir(workdir)
        if problem:
            raise ValueError(problem)
        self.workdir = workdir.rstrip("/")
        self.hide = [os.path.realpath(path) for path in hide]
        _unmount_orphans()
        self.root = tempfile.mkdtemp(prefix=f"{_ROOT_PREFIX}{os.getpid()}-")
        self.mounted = self.as_root and _mount_tmpfs(
            self.root, (workspace_bytes or self.limits.workspace_bytes) + _SLACK
        )
        os.chmod(self.root, 0o711)
        self.workspace = os.path.join(self.root, "workspace")
        os.mkdir(self.workspace, 0o755)
        self._episode_uid = super()._uid()
        self._binds: list[str] = []

    def check(self) -> None:
        problem = self._requirements()
        if problem:
            raise SandboxUnavailable(f"Harbor tasks run in bubblewrap: {problem}")

    # -- the workspace ------------------------------------------------------------------

    def seed(self, files: dict[str, bytes]) -> None:
        """Write the task's starting files into the workspace."""
        self._write_files(self.workspace, files, self._episode_uid)
        self._own(self.workspace)

    def _own(self, folder: str) -> None:
        if self._episode_uid is None:
            return
        os.chown(folder, self._episode_uid, self._episode_uid)
        for directory, _subdirectories, names in os.walk(folder):
            os.chown(directory, self._episode_uid, self._episode_uid)
            for entry in names:
                os.lchown(os.path.join(directory, entry), self._episode_uid, self._episode_uid)

    def workspace_bytes(self) -> int:
        """The workspace's size on disk (files and links, never followed)."""
        total = 0
        for directory, _subdirectories, names in os.walk(self.workspace):
            for entry in names:
                try:
                    total += os.lstat(os.path.join(directory, entry)).st_size
                except OSError:
                    pass
        return total

    # -- runs ---------------------------------------------------------------------------

    def shell(self, script: str, *, limits: SandboxLimits | None = None) -> SandboxResult:
        """Run ``script`` with ``/bin/bash`` in the workspace (what the agent's ``bash`` tool does)."""
        self._binds = []
        return self.run(["/bin/bash", "-c", script], files={}, limits=limits)

    def verify(
        self, tests_dir: Path, script: str, *, limits: SandboxLimits | None = None, environment: dict[str, str]
    ) -> tuple[SandboxResult, str]:
        """Run the task's tests: ``tests_dir`` read-only at ``/tests``, a fresh ``/logs/verifier``.

        Returns the result and the host folder that was ``/logs/verifier`` (the caller reads
        the reward file there and removes it).
        """
        logs = tempfile.mkdtemp(prefix="verifier-", dir=self.root)
        os.chmod(logs, 0o755)
        self._own(logs)
        self._binds = [
            "--ro-bind",
            str(tests_dir),
            "/tests",
            "--perms",
            "0755",
            "--dir",
            "/logs",
            "--bind",
            logs,
            "/logs/verifier",
        ]
        try:
            result = self.run(["/bin/bash", "-c", script], files={}, limits=limits, environment=environment)
        finally:
            self._binds = []
        return result, logs

    def _uid(self) -> int | None:  # one uid for the episode: its files stay writable between commands
        return self._episode_uid

    def _launcher(self, scratch: str, limits: SandboxLimits, collect: Sequence[str]) -> list[str]:
        arguments = super()._launcher(scratch, limits, ("workspace",))
        work = os.path.join(scratch, "work")
        position = arguments.index(work)
        parents: list[str] = []  # bwrap makes missing parents 0700: the sandbox uid could not pass them
        for parent in reversed(Path(self.workdir).parents[:-1]):
            parents += ["--perms", "0755", "--dir", str(parent)]
        arguments[position - 1 : position + 2] = [*parents, "--bind", self.workspace, self.workdir]
        masks: list[str] = []
        roots = [os.path.realpath(root) for root in [*_visible_roots(self.python), "/etc"] if os.path.exists(root)]
        for path in self.hide:  # only where a bound directory would show it; elsewhere it is not there at all
            if any(_is_under(path, root) for root in roots):
                masks += ["--tmpfs", path]
        separator = len(arguments) - 1 - arguments[::-1].index("--")
        arguments[separator:separator] = [*self._binds, *masks]
        return arguments

    def _entry(self, collect: Sequence[str]) -> list[str]:
        return []

    def close(self) -> None:
        """Delete the workspace and the verifier's folders (idempotent)."""
        if self.mounted:
            subprocess.run(["umount", "-l", self.root], check=False, capture_output=True)  # noqa: S603, S607
            self.mounted = False
        if os.path.isdir(self.root):
            _remove_tree(self.root)
