"""What to tell a user about a missing env, template or provider: near names, the plugin to install.

Each plugin declares what it provides in its own metadata, as entry points named after what
they provide (issue 46): env namespaces in group ``rolloutgym.envs``, policy providers in
``rolloutgym.policies``, templates in ``rolloutgym.templates``. :func:`provider_of` reads an
installed plugin's declarations from its metadata; for a plugin that is not installed it reads
``data/known_plugins.json``, generated from every ``plugins/*/pyproject.toml`` by
``python scripts/known_plugins.py`` (``tests/test_install_hints.py`` checks it is current).
:func:`install_hint` says how to get that plugin (or that it is installed but switched off).
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from importlib.metadata import entry_points
from typing import Any

from rolloutgym_protocol.errors import did_you_mean

from ..install_hints import pip_install
from ._plugins import PluginInfo

__all__ = ["PROVIDES", "env_not_found_message", "install_hint", "known_plugins", "provider_of"]

# What a plugin can provide -> the entry point group that declares it (entry point name = the name provided).
PROVIDES = {"envs": "rolloutgym.envs", "policies": "rolloutgym.policies", "templates": "rolloutgym.templates"}


@functools.cache
def known_plugins() -> dict[str, dict[str, str]]:
    """``{kind: {name: distribution}}`` for every plugin of this repository, installed or not (generated data)."""
    text = resources.files(__package__).joinpath("data", "known_plugins.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {kind: dict(data[kind]) for kind in PROVIDES}


def provider_of(name: str, kind: str | None = None) -> str | None:
    """The distribution that provides ``name`` (a namespace, policy provider or template; ``kind``: only that
    kind): an installed plugin's own metadata first, then the generated table of this repository's plugins."""
    kinds = [kind] if kind else list(PROVIDES)
    for each in kinds:
        for entry_point in entry_points(group=PROVIDES[each], name=name):
            dist = getattr(entry_point, "dist", None)
            if dist is not None:
                return str(dist.metadata["Name"])
    return next((known_plugins()[each][name] for each in kinds if name in known_plugins()[each]), None)


def install_hint(plugins: list[PluginInfo], name: str, kind: str | None = None) -> str:
    """How to get the plugin that provides ``name`` (a namespace, template or provider: :func:`provider_of`).

    A plugin that is installed but switched off by ``ROLLOUTGYM_DISABLE_PLUGINS`` or left out of
    ``ROLLOUTGYM_PLUGINS`` is named as such; otherwise the hint is the install from the checkout
    (:func:`rolloutgym.install_hints.pip_install`: ``pip install ./plugins/NAME``; no index serves the plugins).
    """
    distribution = provider_of(name, kind)
    if distribution is None:
        return ""
    for info in plugins:
        if info.status != "disabled" or (info.distribution or "").lower() != distribution.lower():
            continue
        names = {info.name, info.distribution or ""}
        disabled = {
            part.strip() for part in os.environ.get("ROLLOUTGYM_DISABLE_PLUGINS", "").split(",") if part.strip()
        }
        if names & disabled:
            return (
                f"The {info.name} plugin ({distribution}) is installed but disabled by "
                f"ROLLOUTGYM_DISABLE_PLUGINS={os.environ.get('ROLLOUTGYM_DISABLE_PLUGINS', '')}; "
                f"remove '{sorted(names & disabled)[0]}' from that variable."
            )
        return (
            f"The {info.name} plugin ({distribution}) is installed but disabled: ROLLOUTGYM_PLUGINS="
            f"{os.environ.get('ROLLOUTGYM_PLUGINS', '')} does not name it; add '{info.name}' to that variable "
            "or unset it."
        )
    return f"Install it with: {pip_install(distribution)}"  # no full stop: it would be copied with the path


def env_not_found_message(registry: Any, env_id: str, namespace: str) -> str:
    """The one-line error for an unknown env id: near names, namespaces, the plugin to install."""
    ids = sorted(registry.env_specs())
    namespaces = sorted({identifier.split("/")[0] for identifier in ids})
    message = f"no environment '{env_id}'.{did_you_mean(env_id, ids)}"
    message += f" Installed namespaces: {', '.join(namespaces) or 'none'}."
    if namespace in namespaces:
        message += f" Run 'rolloutgym list {namespace}' to see its environments."
    elif (distribution := provider_of(namespace, "envs")) is not None:
        message += (
            f" The '{namespace}' namespace comes from '{distribution}'. {registry.install_hint(namespace, 'envs')}"
        )
    else:
        message += " Run 'rolloutgym list' to see every environment."
    if "/" not in env_id and "." not in env_id:  # a slug, as 'rolloutgym push' names envs on the platform
        message += f" An env pushed to the platform runs there: rolloutgym run {env_id} --remote."
    failed = [info for info in registry.failed_plugins()]
    if failed:
        message += (
            " Some plugins failed to load (run 'rolloutgym plugins'): " + ", ".join(info.name for info in failed) + "."
        )
    return message
