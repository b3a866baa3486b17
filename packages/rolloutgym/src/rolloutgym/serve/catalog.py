"""What a server serves: env ids and env files, resolved once, looked up by id.

Only what the server was started with can be addressed: a request's env id is looked
up in this table and never treated as a path, so no request can make the server read a
file from its disk.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.errors import EnvNotFound, did_you_mean

from ..registry import task_id, task_split
from ..sources import EnvSource, ResolvedEnv
from ._codec import encode_value

__all__ = ["Catalog", "ServedEnv"]


@dataclass
class ServedEnv:
    """One served environment: its resolution (tasks and factory) and where it came from."""

    env_id: str
    resolved: ResolvedEnv
    description: str = ""

    def task_ids(self) -> list[str]:
        """The task ids, by index (the env's task index: built once, not per call)."""
        return self.resolved.task_ids

    def resolve_task(self, task: Any) -> tuple[int, Any]:
        """``task`` (index, id or ``None`` for the first) -> ``(index, item)``: the env's own task index.

        A client names a task by index or id only (a task item is the local API's alone).
        """
        if task is not None and (isinstance(task, bool) or not isinstance(task, (int, str))):
            raise TypeError("task must be a task index (int) or a task id (str)")
        if task in (0, "0") and self.resolved.tasks == [None]:
            return 0, None
        return self.resolved.find_task(task)

    def info(self) -> dict[str, Any]:
        resolved = self.resolved
        return {
            "id": self.env_id,
            "version": resolved.version,
            "description": self.description,
            "source": "file" if resolved.source.startswith("file:") else resolved.source,
            "plugin": resolved.plugin,
            "plugin_version": resolved.plugin_version,
            "replayable": resolved.replayable,
            "max_steps": resolved.max_steps,
            "timeout": resolved.timeout,
            "tasks": 0 if resolved.tasks == [None] else len(resolved.tasks),
        }

    def tasks(self, *, items: bool = True) -> list[dict[str, Any]]:
        """The task list a client sees (``item``: the task as a run file records it)."""
        if self.resolved.tasks == [None]:
            return []
        listing = []
        for index, item in enumerate(self.resolved.tasks):
            entry: dict[str, Any] = {"index": index, "id": task_id(item, index), "split": task_split(item)}
            if items:
                entry["item"] = encode_value(item)
            listing.append(entry)
        return listing


def _looks_like_id(env_id: str) -> bool:
    """Whether ``env_id`` can be a registered id (not a path, file name or URL)."""
    return (
        "://" not in env_id
        and not env_id.startswith(("/", ".", "~"))
        and not env_id.endswith((".py", ".json", ".jsonl"))
        and "\\" not in env_id
    )


class Catalog:
    """The envs a server serves.

    Args:
        references: registered env ids and env files (``.py``/``.json``/``.jsonl``);
            ``None`` or empty serves every registered env (resolved on first use).
        env_kwargs: keyword arguments for every served env's factory (``--env-arg``).
        registry: the registry to resolve ids with (default: the global one).
    """

    def __init__(
        self, references: Sequence[str] | None = None, *, registry: Any = None, env_kwargs: dict[str, Any] | None = None
    ) -> None:
        from ..registry import get_registry

        self.registry = registry or get_registry()
        self.env_kwargs = dict(env_kwargs or {})
        self.serve_all = not references
        self._envs: dict[str, ServedEnv] = {}
        self._lock = threading.Lock()
        for reference in references or ():
            served = self._resolve(EnvSource(reference, dict(self.env_kwargs)))
            self._envs[served.env_id] = served

    def _resolve(self, source: EnvSource) -> ServedEnv:
        resolved = source.resolve(self.registry)
        description = ""
        if resolved.source == "registry":
            description = self.registry.resolve_env(resolved.env_id).spec.description or ""
        return ServedEnv(resolved.env_id, resolved, description)

    def ids(self) -> list[str]:
        if self.serve_all:
            return sorted(set(self._envs) | {spec.id for spec in self.registry.envs()})
        return sorted(self._envs)

    def get(self, env_id: Any) -> ServedEnv:
        """The served env ``env_id``; ``EnvNotFound`` (the local API's message) otherwise."""
        if not isinstance(env_id, str) or not env_id:
            raise EnvNotFound(f"env must be a served environment id (a string), got {env_id!r}; GET /envs lists them")
        served = self._envs.get(env_id)
        if served is not None:
            return served
        if self.serve_all and _looks_like_id(env_id):
            # Only registered ids: EnvSource would also accept a path, which a request must never name.
            spec = self.registry.resolve_env(env_id).spec
            with self._lock:
                served = self._envs.get(spec.id)
                if served is None:
                    served = self._envs[spec.id] = self._resolve(EnvSource(spec.id, dict(self.env_kwargs)))
            self._envs.setdefault(env_id, served)
            return served
        ids = sorted(self._envs)
        for served in self._envs.values():  # 'namespace/name' without a version: the newest served
            if served.env_id.rsplit("-v", 1)[0] == env_id:
                return served
        raise EnvNotFound(
            f"no environment '{env_id}' on this server.{did_you_mean(env_id, ids)} "
            f"It serves: {', '.join(ids) or 'nothing'}."
        )

    def describe(self) -> list[dict[str, Any]]:
        """Every served env's description (resolving each: loads task lists)."""
        return [self.get(env_id).info() for env_id in self.ids()]
