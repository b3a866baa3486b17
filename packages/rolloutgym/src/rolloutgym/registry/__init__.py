"""The plugin registry and the module-level shortcuts over the default registry."""

from __future__ import annotations

import functools
from typing import Any

from ._build import adapt_env, import_entry_point, tag_env
from ._plugins import CORE_PLUGINS, ENTRY_POINT_GROUP, PluginInfo, core_plugins, discover_plugins
from ._tasks import TaskIndex, task_id, task_split
from .registry import Registered, Registry

__all__ = [
    "CORE_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "Registered",
    "Registry",
    "TaskIndex",
    "adapt_env",
    "core_plugins",
    "discover_plugins",
    "envs",
    "get_registry",
    "import_entry_point",
    "make_policy",
    "policies",
    "register_gymnasium",
    "reset_registry",
    "tag_env",
    "task_id",
    "task_split",
]


@functools.cache
def get_registry() -> Registry:
    """The process-wide registry, built from installed plugins on first use."""
    return Registry()


def reset_registry() -> None:
    """Forget the default registry (e.g. after changing ROLLOUTGYM_PLUGINS)."""
    get_registry.cache_clear()


def make_policy(reference: str, **options: Any) -> Any:
    """Create a policy from ``"provider[:model]"``."""
    return get_registry().make_policy(reference, **options)


def envs(namespace: str | None = None) -> list[Any]:
    """Registered environment specs."""
    return get_registry().envs(namespace)


def policies() -> list[Any]:
    """Registered policy provider specs."""
    return get_registry().policies()


def register_gymnasium() -> list[str]:
    """Register every rolloutgym environment with Gymnasium.

    After this call ``gymnasium.make("toy/guess-v0", task=2)`` works for sync
    environments (async ones are adapted with ``as_sync``), so Gymnasium wrappers,
    ``check_env`` and vector envs can be used on them: ``gymnasium.make_vec(ENV_ID,
    num_envs=N)`` (``mode="async"`` for worker processes) builds the vectors of
    ``_gym_vector.py``, which batch info values of differing types and keep shared memory
    off (it cannot hold text). Returns the registered ids.
    """
    import functools

    import gymnasium
    from rolloutgym_protocol import AsyncEnv, as_sync

    from ._gym_vector import make_vector

    registry = get_registry()
    registered = []
    for spec in registry.envs():

        def factory(_env_id: str = spec.id, **kwargs: Any) -> Any:
            environment = registry.make(_env_id, **kwargs)
            return as_sync(environment) if isinstance(environment, AsyncEnv) else environment

        if spec.id not in gymnasium.registry:
            # A single-turn env ends at its first step; a TimeLimit of 1 would also mark that step
            # truncated, which Gymnasium's checker (rightly) rejects.
            limit = spec.max_steps if spec.max_steps and spec.max_steps > 1 else None
            gymnasium.register(
                id=spec.id,
                entry_point=factory,
                vector_entry_point=functools.partial(make_vector, spec.id),
                max_episode_steps=limit,
                disable_env_checker=True,
            )
        registered.append(spec.id)
    return registered
