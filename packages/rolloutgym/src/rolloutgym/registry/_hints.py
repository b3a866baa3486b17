"""What to tell a user about a missing env, template or provider: near names, the plugin to install.

:data:`KNOWN_PLUGINS` maps a namespace / template / provider to the plugin distribution that
provides it; :func:`install_hint` says how to get it (or that it is installed but switched off).
"""

from __future__ import annotations

import os
from typing import Any

from rolloutgym_protocol.errors import did_you_mean

from ..install_hints import pip_install
from ._plugins import PluginInfo

__all__ = ["KNOWN_PLUGINS", "env_not_found_message", "install_hint"]

# Which plugin distribution to install for a namespace / template / provider that is missing.
KNOWN_PLUGINS = {
    "sql": "rolloutgym-sql",
    "workflow": "rolloutgym-workflow",
    "custom": "rolloutgym-workflow",
    "code": "rolloutgym-code",
    "code-editing": "rolloutgym-code",
    "browser": "rolloutgym-browser",
    "bench": "rolloutgym-benchmarks",
    "rg": "rolloutgym-benchmarks",
    "openai": "rolloutgym-openai",
    "vllm": "rolloutgym-vllm",
    "tinker": "rolloutgym-tinker",
    "hf": "rolloutgym-transformers",
    "bfcl": "rolloutgym-bfcl",
    "trl": "rolloutgym-trl",
}


def install_hint(plugins: list[PluginInfo], name: str) -> str:
    """How to get the plugin that provides ``name`` (a namespace, template or provider of :data:`KNOWN_PLUGINS`).

    A plugin that is installed but switched off by ``ROLLOUTGYM_DISABLE_PLUGINS`` or left out of
    ``ROLLOUTGYM_PLUGINS`` is named as such; otherwise the hint is the install from the checkout
    (:func:`rolloutgym.install_hints.pip_install`: ``pip install ./plugins/NAME``; no index serves the plugins).
    """
    distribution = KNOWN_PLUGINS.get(name)
    if distribution is None:
        return ""
    for info in plugins:
        if info.status != "disabled" or (info.distribution or "").lower() != distribution:
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
    elif namespace in KNOWN_PLUGINS:
        message += (
            f" The '{namespace}' namespace comes from '{KNOWN_PLUGINS[namespace]}'. {registry.install_hint(namespace)}"
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
