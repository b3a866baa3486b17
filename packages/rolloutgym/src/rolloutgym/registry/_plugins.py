"""Discovering plugins: the core's own plugins, then entry points in group ``rolloutgym``.

The core's hook modules (:data:`CORE_PLUGINS`: the ``toy`` envs and built-in policies, the
verifier primitives, the training-data exporters) are registered like any plugin but are
one unit that no environment variable switches off, the way simonw/llm registers its
``DEFAULT_PLUGINS``. For the other plugins ``ROLLOUTGYM_PLUGINS=a,b`` loads only those
(entry point names or distribution names) and ``ROLLOUTGYM_DISABLE_PLUGINS=c`` skips some.
A plugin that fails to import is recorded with its distribution, version, entry point and
the exception.
"""

from __future__ import annotations

import importlib
import inspect
import os
import traceback
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, version
from types import ModuleType

from rolloutgym_protocol import hookspecs
from rolloutgym_protocol.errors import did_you_mean

__all__ = ["CORE_PLUGINS", "ENTRY_POINT_GROUP", "PluginInfo", "core_plugins", "discover_plugins", "is_allowed"]

ENTRY_POINT_GROUP = "rolloutgym"

# The core's own hook modules, by plugin name: always registered, never filtered.
CORE_PLUGINS = {
    "builtin": "rolloutgym.builtin.plugin",
    "verifiers": "rolloutgym.verifiers.plugin",
    "export": "rolloutgym.export.plugin",
    "sandboxes": "rolloutgym.sandboxes.plugin",
}


@dataclass
class PluginInfo:
    """One discovered plugin and how loading it went."""

    name: str
    value: str
    distribution: str | None
    version: str | None
    status: str = "loaded"  # "loaded", "failed", "disabled"
    error: str | None = None
    error_detail: str | None = None
    module: ModuleType | None = None
    core: bool = False
    warnings: list[str] = field(default_factory=list)

    def describe(self) -> str:
        dist = f"{self.distribution} {self.version}" if self.distribution else "unknown distribution"
        return f"plugin '{self.name}' ({dist}, entry point '{self.value}')"


def _split_env(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def is_allowed(names: set[str]) -> bool:
    """Whether a plugin known by ``names`` (entry point and distribution names) passes
    ``ROLLOUTGYM_PLUGINS`` and ``ROLLOUTGYM_DISABLE_PLUGINS``."""
    allowed = _split_env("ROLLOUTGYM_PLUGINS")
    disabled = _split_env("ROLLOUTGYM_DISABLE_PLUGINS") or set()
    return (allowed is None or bool(names & allowed)) and not names & disabled


def _distribution(entry_point: EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def core_plugins() -> list[PluginInfo]:
    """The core's own plugins (:data:`CORE_PLUGINS`), loaded; allow and deny lists do not apply."""
    try:
        core_version: str | None = version("rolloutgym")
    except PackageNotFoundError:
        core_version = None
    return [
        PluginInfo(name, value, "rolloutgym", core_version, module=importlib.import_module(value), core=True)
        for name, value in CORE_PLUGINS.items()
    ]


def discover_plugins() -> list[PluginInfo]:
    """Load every allowed plugin module of other distributions; never raises for a broken plugin."""
    plugins: list[PluginInfo] = []
    seen: set[tuple[str, str]] = set()
    core_modules = set(CORE_PLUGINS.values())
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.value in core_modules:  # registered by core_plugins(), whatever the metadata says
            continue
        if (entry_point.name, entry_point.value) in seen:
            continue
        seen.add((entry_point.name, entry_point.value))
        distribution, version = _distribution(entry_point)
        info = PluginInfo(entry_point.name, entry_point.value, distribution, version)
        if not is_allowed({entry_point.name, distribution or ""}):
            info.status = "disabled"
            plugins.append(info)
            continue
        try:
            loaded = entry_point.load()
        except BaseException as exc:  # noqa: BLE001 - a broken plugin must not break the others
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            info.status = "failed"
            info.error = f"{type(exc).__name__}: {exc}"
            info.error_detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        else:
            info.module = loaded
        plugins.append(info)
    return plugins


def warn_unmarked_hooks(info: PluginInfo) -> None:
    """Name a plugin module's functions called like a hook (``rolloutgym_*``) but not marked ``@hookimpl``.

    pluggy ignores them without a word, so they are never called; the warning is listed by
    ``rolloutgym plugins``, like a marked hook with a misspelled name.
    """
    if not inspect.ismodule(info.module):
        return
    prefix, marker = f"{hookspecs.PROJECT_NAME}_", f"{hookspecs.PROJECT_NAME}_impl"
    known = [name for name in dir(hookspecs) if name.startswith(prefix)]
    for name, value in vars(info.module).items():
        if not name.startswith(prefix) or not inspect.isfunction(value) or hasattr(value, marker):
            continue
        if value.__module__ != info.module.__name__:  # imported from elsewhere, not defined here
            continue
        hint = "" if name in known else did_you_mean(name, known)
        warning = (
            f"function {name!r} is named like a hook but not marked @hookimpl, so it is never called: "
            f"decorate it with @rolloutgym_protocol.hookimpl.{hint}"
        )
        if warning not in info.warnings:
            info.warnings.append(warning)
