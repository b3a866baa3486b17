"""The one builder of ``pip install`` hints for this project's own distributions (issue 32).

No package index serves ``rolloutgym`` or its plugins: they install from a checkout of the
repository (``pip install ./plugins/sql``). A hint therefore names the checkout's folder as it
works from where the user stands: ``./plugins/sql`` (relative) when the current folder is in the
checkout, the absolute path when the checkout that rolloutgym was installed from is elsewhere,
and ``./plugins/sql`` "from a clone of the rolloutgym repository" when no checkout is known (an
install from wheels). Extras are kept: ``pip install './plugins/code[humaneval]'``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["checkout_root", "folder_of", "pip_install"]

CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def folder_of(distribution: str) -> str:
    """The checkout folder of one of this project's distributions: ``plugins/sql``, ``packages/rolloutgym``."""
    if distribution == "rolloutgym-protocol":
        return "protocol"
    if distribution in ("rolloutgym", "rolloutgym-testing", "rolloutgym-platform"):
        return f"packages/{distribution}"
    return f"plugins/{distribution.removeprefix('rolloutgym-')}"


def _is_checkout(root: Path) -> bool:
    return (root / "packages" / "rolloutgym" / "pyproject.toml").is_file() and (root / "plugins").is_dir()


def checkout_root() -> Path | None:
    """The checkout rolloutgym was installed from (editable or not), if it is still there."""
    try:
        text = importlib.metadata.distribution("rolloutgym").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        text = None
    url = json.loads(text).get("url", "") if text else ""
    if url.startswith("file:"):
        root = Path(unquote(urlparse(url).path)).parent.parent  # .../packages/rolloutgym
        if _is_checkout(root):
            return root
    here = Path(__file__).resolve()
    return next((parent for parent in here.parents if _is_checkout(parent)), None)


def _where(folder: str, root: Path | None) -> str:
    if root is None:
        return f"./{folder}"
    target = root / folder
    cwd = Path.cwd().resolve()
    if cwd == root or root in cwd.parents:
        relative = os.path.relpath(target, cwd)
        return relative if relative.startswith("..") else f"./{relative}"
    return str(target)


def pip_install(distribution: str, *extras: str) -> str:
    """``pip install TARGET`` for this project's ``distribution`` with ``extras``, runnable from here.

    >>> pip_install("rolloutgym-code", "humaneval")  # in the checkout's root  # doctest: +SKIP
    "pip install './plugins/code[humaneval]'"
    """
    root = checkout_root()
    where = _where(folder_of(distribution), root)
    target = f"{where}[{','.join(extras)}]" if extras else where
    command = f"pip install {shlex.quote(target)}"
    if root is None:
        command += " (from a clone of the rolloutgym repository)"
    if distribution in ("rolloutgym-transformers", "rolloutgym-trl") and importlib.util.find_spec("torch") is None:
        command = f"{CPU_TORCH} (on a machine without a CUDA GPU), then {command}"
    return command
