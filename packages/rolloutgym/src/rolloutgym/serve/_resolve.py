"""Resolving a remote env URL for a run (``rolloutgym run http://HOST:PORT/ENV_ID``)."""

from __future__ import annotations

from typing import Any

from .client import AsyncRemoteEnv, env_info, env_tasks, parse_env_url

__all__ = ["resolve_env_url"]


def resolve_env_url(source: Any, registry: Any = None) -> Any:
    """A ``ResolvedEnv`` whose tasks are the server's and whose envs are sessions on it.

    The run header records the served env's id, version and plugin (as a local run does)
    and the URL as its ``source``. Each env is an :class:`AsyncRemoteEnv` (WebSocket).
    """
    from ..sources import ResolvedEnv

    url = source.reference
    parse_env_url(url)  # a clear error for a URL without an env id
    info = env_info(url)
    listing = env_tasks(url)
    kwargs = dict(source.kwargs) or None
    items = [entry.get("item", {"id": entry["id"], "split": entry.get("split")}) for entry in listing] or [None]
    ids = [entry["id"] for entry in listing] or ["0"]
    index_of = {id(item): index for index, item in enumerate(items)}
    env_url = url.rstrip("/")

    def build(item: Any) -> AsyncRemoteEnv:
        index = index_of.get(id(item))
        if index is None:
            from ..registry import task_id

            return AsyncRemoteEnv(env_url, task=None if item is None else task_id(item, 0), kwargs=kwargs)
        return AsyncRemoteEnv(env_url, task=index if listing else None, kwargs=kwargs)

    return ResolvedEnv(
        env_id=info["id"],
        version=info.get("version"),
        tasks=items,
        build=build,
        origin=env_url,
        plugin=info.get("plugin"),
        plugin_version=info.get("plugin_version"),
        replayable=bool(info.get("replayable")),
        max_steps=info.get("max_steps"),
        timeout=info.get("timeout"),
        env_source=source,
        registry=registry,
        task_ids=ids,
    )
