"""The harness process inside bubblewrap (``sandbox="bwrap"``), on an allow-listed filesystem.

New network, PID, IPC and UTS namespaces, an unprivileged uid (65534 when rolloutgym runs as
root), an empty root, a fresh ``/tmp``, and the harness's work folder as the only writable host
folder. What the agent can read is listed, never inherited from rolloutgym's own ``sys.path``:

* ``/usr`` (and the ``/bin``, ``/lib`` links), with every Python ``site-packages`` /
  ``dist-packages`` folder under it hidden (an empty read-only folder on top);
* the interpreter: its base prefix's ``bin`` and ``lib`` (the standard library; its
  ``site-packages`` hidden), and a virtual environment's ``bin`` and ``pyvenv.cfg``;
* the agent's own packages (``packages``: distribution names, with everything they require):
  each one's installed files under ``/opt/rolloutgym-agent/site`` (``PYTHONPATH``); a
  ``rolloutgym*`` distribution (the env plugins, their data, solutions, hidden tests and
  graders) is refused, and an editable install cannot be listed;
* single files the harness needs (``files``, read-only) and the work folder.

The endpoint is reached at the same ``127.0.0.1:PORT`` through its Unix socket, bound in, and a
copy of :mod:`rolloutgym_harness._forward` (standard library only) run with ``python -I -S``.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata

from rolloutgym_protocol.errors import ConfigError

AGENT_SITE = "/opt/rolloutgym-agent/site"
DEFAULT_PACKAGES = ("openai", "anthropic", "mcp")  # the SDKs a harness script talks with, when installed


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise ConfigError("sandbox=bwrap needs bubblewrap (apt-get install bubblewrap), or drop sandbox=")
    return path


def _canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(distribution: metadata.Distribution, extras: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """What ``distribution`` with ``extras`` requires: ``(name, its extras)``, markers evaluated here."""
    from packaging.requirements import InvalidRequirement, Requirement

    wanted = []
    for text in distribution.requires or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is not None and not any(marker.evaluate({"extra": extra}) for extra in {"", *extras}):
            continue
        wanted.append((requirement.name, frozenset(requirement.extras)))
    return wanted


def _editable(distribution: metadata.Distribution) -> bool:
    text = distribution.read_text("direct_url.json")
    if not text:
        return False
    try:
        return bool(json.loads(text).get("dir_info", {}).get("editable"))
    except ValueError:
        return False


@functools.lru_cache(maxsize=32)
def package_binds(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(host path, sandbox path)`` of the installed files of ``names`` and all they require."""
    seen: set[tuple[str, frozenset[str]]] = set()
    binds: dict[str, str] = {}
    pending: list[tuple[str, frozenset[str]]] = [(name, frozenset()) for name in names]
    while pending:
        raw, extras = pending.pop()
        name = _canonical_name(raw)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        if name.startswith("rolloutgym"):
            raise ConfigError(
                f"sandbox packages: {name} is a rolloutgym package (env plugins, their data and graders are "
                "never visible to the agent); list only the agent's own packages"
            )
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if raw in names:
                raise ConfigError(f"sandbox packages: {name} is not installed (pip install {name})") from None
            continue  # an optional dependency that is not here
        if _editable(distribution):
            raise ConfigError(f"sandbox packages: {name} is an editable install; install it normally to list it")
        root = os.path.realpath(str(distribution.locate_file("")))
        for file in distribution.files or ():
            top = file.parts[0] if file.parts else ""
            if not top or top in ("..", "__pycache__") or top.endswith(".pth") or top.startswith("__editable__"):
                continue
            source = os.path.join(root, top)
            if os.path.exists(source):
                binds[source] = f"{AGENT_SITE}/{top}"
        pending.extend(_requirements(distribution, extras))
    return tuple(sorted(binds.items()))


def _site_folders() -> list[str]:
    """Python package folders under the system and interpreter roots (hidden in the sandbox)."""
    base = os.path.realpath(sys.base_prefix)
    patterns = [
        f"{base}/lib/python3*/site-packages",
        f"{base}/lib/python3*/dist-packages",
        "/usr/lib/python3*/site-packages",
        "/usr/lib/python3*/dist-packages",
        "/usr/local/lib/python3*/site-packages",
        "/usr/local/lib/python3*/dist-packages",
    ]
    return sorted({os.path.realpath(path) for pattern in patterns for path in glob.glob(pattern)})


def _interpreter() -> list[str]:
    """Bind the interpreter and its standard library (its package folders hidden after)."""
    arguments: list[str] = []
    base = os.path.realpath(sys.base_prefix)
    if base != "/usr" and not base.startswith("/usr/"):
        for name in ("bin", "lib", "lib64"):
            path = os.path.join(base, name)
            if os.path.isdir(path):
                arguments += ["--ro-bind", path, path]
    prefix = os.path.realpath(sys.prefix)
    if prefix != base:  # a virtual environment: its interpreter links, never its packages or scripts
        links = glob.glob(os.path.join(prefix, "bin", "python*")) + [os.path.join(prefix, "pyvenv.cfg")]
        if os.path.dirname(os.path.abspath(sys.executable)) != os.path.join(prefix, "bin"):
            links.append(os.path.abspath(sys.executable))
        for path in links:
            if os.path.lexists(path):
                arguments += ["--ro-bind", path, path]
    return arguments


def _system() -> list[str]:
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    # public CA certificates: HTTP clients (httpx, openai, mcp) load them even for http:// URLs
    system = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")
    for path in (*system, "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts"):
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
        value = os.environ.get(variable)
        if value and os.path.exists(value) and not os.path.realpath(value).startswith(os.path.realpath(sys.prefix)):
            certificates = os.path.realpath(value)
            folder = certificates if os.path.isdir(certificates) else os.path.dirname(certificates)
            arguments += ["--ro-bind", folder, folder]
    return arguments


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


def installed_packages(names: Iterable[str]) -> tuple[str, ...]:
    """Those of ``names`` that are installed here."""
    found = []
    for name in names:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found.append(name)
    return tuple(found)


def sandboxed(
    command: str,
    *,
    workdir: str,
    run_dir: str,
    socket_path: str,
    port: int,
    packages: Sequence[str] = DEFAULT_PACKAGES,
    files: Sequence[str] = (),
    folders: Sequence[str] = (),
    python_path: Sequence[str] = (),
) -> list[str]:
    """The argv that runs ``command`` (a shell command) in the sandbox; ``folders`` are more
    read-only host folders the agent needs (a CLI's install folder)."""
    workdir = os.path.realpath(workdir)
    run_dir = os.path.realpath(run_dir)
    arguments = [bwrap_path(), "--unshare-user"]
    arguments += ["--uid", "65534", "--gid", "65534"] if os.geteuid() == 0 else ["--disable-userns"]
    arguments += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    arguments += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    arguments += _system() + _interpreter()
    for folder in _site_folders():  # hidden: an empty read-only folder on top
        arguments += ["--tmpfs", folder, "--remount-ro", folder]
    arguments += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for source, target in package_binds(tuple(packages)):
        arguments += ["--ro-bind", source, target]
    for path in (*files, *folders):
        real = os.path.realpath(path)
        arguments += ["--ro-bind", real, real]
    arguments += ["--bind", run_dir, run_dir]  # after the read-only binds: these stay writable
    if workdir != run_dir:
        arguments += ["--bind", workdir, workdir]
    arguments += ["--remount-ro", "/"]  # the sandbox's own root (the folders bwrap made) is read-only too
    arguments += [
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "PYTHONPATH",
        ":".join((AGENT_SITE, *python_path)),
        "--unsetenv",
        "PYTHONHOME",
    ]
    arguments += ["--setenv", "PYTHONNOUSERSITE", "1", "--chdir", workdir, "--"]
    forwarder = os.path.join(run_dir, ".rolloutgym_forward.py")
    shutil.copyfile(os.path.join(os.path.dirname(__file__), "_forward.py"), forwarder)
    return arguments + [sys.executable, "-I", "-S", forwarder, socket_path, str(port), command]
