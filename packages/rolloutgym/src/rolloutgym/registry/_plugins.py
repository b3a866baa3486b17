"""Discovering plugins: entry points in group ``rolloutgym``, filtered by environment variables.

``ROLLOUTGYM_PLUGINS=a,b`` loads only those plugins (entry point names or distribution
names); ``ROLLOUTGYM_DISABLE_PLUGINS=c`` skips some. A plugin that fails to import is
recorded with its distribution, version, entry point and the exception.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

__all__ = ["ENTRY_POINT_GROUP", "PluginInfo", "discover_plugins"]

ENTRY_POINT_GROUP = "rolloutgym"


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

    def describe(self) -> str:
        dist = f"{self.distribution} {self.version}" if self.distribution else "unknown distribution"
        return f"plugin '{self.name}' ({dist}, entry point '{self.value}')"


def _split_env(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _distribution(entry_point: EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def discover_plugins() -> list[PluginInfo]:
    """Load every allowed plugin module; never raises for a broken plugin."""
    allowed = _split_env("ROLLOUTGYM_PLUGINS")
    disabled = _split_env("ROLLOUTGYM_DISABLE_PLUGINS") or set()
    plugins: list[PluginInfo] = []
    seen: set[tuple[str, str]] = set()
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if (entry_point.name, entry_point.value) in seen:
            continue
        seen.add((entry_point.name, entry_point.value))
        distribution, version = _distribution(entry_point)
        info = PluginInfo(entry_point.name, entry_point.value, distribution, version)
        names = {entry_point.name, distribution or ""}
        is_builtin = entry_point.name == "builtin" and distribution == "rolloutgym"
        if (allowed is not None and not is_builtin and not (names & allowed)) or (names & disabled):
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
