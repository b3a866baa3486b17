"""The bubblewrap provider (``bwrap``): the namespace sandbox entered through bubblewrap."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from ._mount_plan import _mask_arguments, _root_binds
from ._namespace_sandbox import NamespaceSandbox
from ._sandbox_types import SandboxLimits

__all__ = ["BubblewrapSandbox"]


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
        prefix = Path(real).parent.parent
        # bubblewrap makes a bind's missing parent folders mode 700: the sandbox's uid could not reach the prefix
        parents = [str(parent) for parent in reversed(prefix.parents) if str(parent) != "/"]
        made = [argument for parent in parents for argument in ("--perms", "0755", "--dir", parent)]
        return [*made, "--ro-bind", str(prefix), str(prefix)]

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
