"""The harness process inside bubblewrap (``sandbox="bwrap"``).

New network, PID, IPC and UTS namespaces, an unprivileged uid (65534 when rolloutgym runs as
root), an empty root with ``/usr`` (and the ``/bin``, ``/lib`` links), the Python prefixes and
``sys.path`` folders read-only, a fresh ``/tmp``, and the harness's work folder as the only
writable host folder. The endpoint is reached at the same ``127.0.0.1:PORT`` through its Unix
socket, bound in, and :mod:`rolloutgym_harness._forward` inside.
"""

from __future__ import annotations

import os
import shutil
import sys

from rolloutgym_protocol.errors import ConfigError


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise ConfigError("sandbox=bwrap needs bubblewrap (apt-get install bubblewrap), or drop sandbox=")
    return path


def _read_only_roots() -> list[str]:
    candidates = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    candidates += [entry for entry in sys.path if entry]
    roots: list[str] = []
    for candidate in sorted({os.path.realpath(path) for path in candidates}, key=len):
        if not os.path.isdir(candidate) or candidate.startswith("/usr/") or candidate == "/usr":
            continue
        if any(candidate == root or candidate.startswith(root + "/") for root in roots):
            continue
        roots.append(candidate)
    return roots


def sandboxed(command: str, *, workdir: str, run_dir: str, socket_path: str, port: int) -> list[str]:
    """The argv that runs ``command`` (a shell command) in the sandbox."""
    workdir = os.path.realpath(workdir)
    run_dir = os.path.realpath(run_dir)
    arguments = [bwrap_path(), "--unshare-user"]
    arguments += ["--uid", "65534", "--gid", "65534"] if os.geteuid() == 0 else ["--disable-userns"]
    arguments += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    arguments += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    # public CA certificates: HTTP clients (httpx, openai, mcp) load them even for http:// URLs
    system = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")
    for path in (*system, "/etc/ssl", "/etc/ca-certificates", "/etc/pki"):
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    arguments += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
        value = os.environ.get(variable)
        if value and os.path.exists(value):
            certificates = os.path.realpath(value)
            folder = certificates if os.path.isdir(certificates) else os.path.dirname(certificates)
            arguments += ["--ro-bind", folder, folder]
    for root in _read_only_roots():
        arguments += ["--ro-bind", root, root]
    arguments += ["--bind", run_dir, run_dir]  # after the read-only roots: these stay writable
    if workdir != run_dir:
        arguments += ["--bind", workdir, workdir]
    arguments += ["--setenv", "HOME", "/tmp", "--chdir", workdir, "--"]
    forward = [sys.executable, "-m", "rolloutgym_harness._forward", socket_path, str(port), command]
    return arguments + forward
