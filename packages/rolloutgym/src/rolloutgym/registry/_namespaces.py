"""Which plugin owns an env namespace, read from package metadata before any plugin code runs (issue 46).

A plugin declares each env namespace it registers as an entry point in group
``rolloutgym.envs``: the entry point's name is the namespace, its value the function that
returns that namespace's ``EnvSpec`` list::

    [project.entry-points."rolloutgym.envs"]
    rg = "rolloutgym_benchmarks.specs:rg"
    sql = "rolloutgym_sql.plugin:rolloutgym_envs"

(a value without ``:attr`` means the module's ``rolloutgym_envs`` hook). A lookup of
``ns/name-vN`` calls only the functions declared for ``ns``, so it imports only the plugin
that owns ``ns``; listing every env calls all of them (each reads data, never an env module).
A distribution that declares namespaces has its envs from these functions only: the
``rolloutgym_envs`` hook of its plugin module, if it kept one, is not called. A plugin that
declares none (registered the old way, a ``rolloutgym_envs`` hook) is asked, as before, for a
listing and for a namespace no plugin declares. The core's own ``toy`` namespace is declared
here (:data:`CORE_ENVS`), as :data:`~rolloutgym.registry.CORE_PLUGINS` registers its hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ._build import import_entry_point
from ._plugins import PluginInfo, is_allowed

__all__ = ["CORE_ENVS", "ENV_GROUP", "EnvDeclaration", "declared_sources"]

ENV_GROUP = "rolloutgym.envs"
# The core's own env namespaces, declared as plugins declare theirs (no metadata needed).
CORE_ENVS = {"toy": "rolloutgym.builtin.plugin:rolloutgym_envs"}


@dataclass
class EnvDeclaration:
    """One declared function returning the ``EnvSpec`` list of the namespaces it is declared for."""

    value: str  # "module:function" (or "module": its rolloutgym_envs hook)
    namespaces: tuple[str, ...]
    plugin: PluginInfo
    loaded: list[Any] | None = None  # what the function returned, once called

    def load(self) -> Any:
        """The function's return value (called once); raises what importing or calling it raises."""
        if self.loaded is None:
            target = self.value if ":" in self.value else f"{self.value}:rolloutgym_envs"
            function = import_entry_point(target, what=f"env specs of namespace '{self.namespaces[0]}'")
            self.loaded = list(function() or ())
        return self.loaded


def _distribution_key(name: str | None) -> str:
    return (name or "").lower().replace("_", "-")


def _owner(entry_point: EntryPoint, plugins: list[PluginInfo]) -> PluginInfo | None:
    """The plugin of the entry point's distribution (one is made for a distribution that only declares envs)."""
    dist = getattr(entry_point, "dist", None)
    distribution = dist.metadata["Name"] if dist is not None else None
    for info in plugins:
        if (
            not info.core
            and info.distribution
            and _distribution_key(info.distribution) == _distribution_key(distribution)
        ):
            return info
    info = PluginInfo(entry_point.name, entry_point.value, distribution, dist.version if dist is not None else None)
    if not is_allowed({entry_point.name, distribution or ""}):
        info.status = "disabled"
    plugins.append(info)
    return info


def declared_sources(plugins: list[PluginInfo], *, core: bool, entry_points_too: bool) -> list[EnvDeclaration]:
    """Every declared namespace function, in plugin order; ``plugins`` gains a row for a distribution that
    declares envs but has no ``rolloutgym`` entry point. Imports nothing: reads metadata only."""
    by_value: dict[str, EnvDeclaration] = {}
    if core:
        owner = next(info for info in plugins if info.core and info.name == "builtin")
        for namespace, value in CORE_ENVS.items():
            by_value[value] = EnvDeclaration(value, (namespace,), owner)
    if entry_points_too:
        for entry_point in entry_points(group=ENV_GROUP):
            owner = _owner(entry_point, plugins)
            if owner is None or owner.status == "disabled" or (owner.status == "failed" and owner.module is None):
                continue
            source = by_value.get(entry_point.value)
            if source is None:
                by_value[entry_point.value] = EnvDeclaration(entry_point.value, (entry_point.name,), owner)
            elif entry_point.name not in source.namespaces:
                source.namespaces += (entry_point.name,)
    order = {id(info): position for position, info in enumerate(plugins)}
    return sorted(by_value.values(), key=lambda source: order.get(id(source.plugin), len(order)))


def declaring_distributions(sources: list[EnvDeclaration]) -> set[str]:
    """The distributions whose envs come from declared functions (their ``rolloutgym_envs`` hooks are not called)."""
    return {_distribution_key(source.plugin.distribution) for source in sources if source.plugin.distribution}


def is_declaring(info: PluginInfo, declaring: set[str]) -> bool:
    return bool(info.distribution) and _distribution_key(info.distribution) in declaring
