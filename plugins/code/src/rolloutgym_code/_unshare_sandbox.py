"""The ``unshare`` provider (fallback without bubblewrap, root only): namespaces from
``unshare``, a private root built by a shell script, entered with ``chroot``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._mount_plan import _masked
from ._namespace_sandbox import NamespaceSandbox
from ._sandbox_types import SandboxLimits

__all__ = ["UnshareSandbox"]


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
for path in $masks; do
    if [ -d ".$path" ]; then mount -t tmpfs -o size=4k,mode=755 tmpfs ".$path"
    elif [ -e ".$path" ]; then mount --bind /dev/null ".$path"; fi
done
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
