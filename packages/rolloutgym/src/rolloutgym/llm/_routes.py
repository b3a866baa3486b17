"""Routing a batch's samples to environments: each ``task_name`` through ``task_to_env``.

A batch is a list of sample dicts, a ``datasets.Dataset`` or a dict of columns
(:func:`batch_samples`); :func:`plan_routes` checks every sample (its task name is mapped, its task
exists, no field clashes with a result column) before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rolloutgym_protocol.errors import ConfigError, TaskNotFound, did_you_mean

from .environments import interface_factory, is_environment_interface
from .rollout_batch import RESULT_COLUMNS

__all__ = ["Route", "TaskEnv", "batch_samples", "plan_routes"]

TaskEnv = str | Callable[[Any], Any]
"""What ``task_to_env`` maps a task name to: a registered env id, or ``factory(task) -> env``."""


class Route:
    """How to build the environment of one task name."""

    def __init__(self, task_name: str, source: Any, registry: Any) -> None:
        self.task_name = task_name
        self.registry = registry
        self.env_id: str | None = None
        self.factory: Callable[[Any], Any] | None = None
        self.has_tasks = False
        self.batched = is_environment_interface(source)
        if self.batched:  # a NeMo-style batched env: each sample's message_log is its episode
            self.factory = interface_factory(source)
        elif isinstance(source, str):
            spec = registry.resolve_env(source).spec  # EnvNotFound names the installed ones
            self.env_id, self.has_tasks = spec.id, spec.tasks is not None
        elif callable(source):
            self.factory = source
        else:
            raise ConfigError(
                f"task_to_env[{task_name!r}] must be a registered env id (e.g. 'sql/shop-v0'), a "
                f"factory(task) -> env or a batched EnvironmentInterface, got {type(source).__name__}"
            )

    def task_of(self, sample: Mapping[str, Any]) -> Any:
        """What the env is made from: the sample itself for a batched env, else its ``task``."""
        return sample if self.batched else sample["task"]

    def check(self, task: Any, index: int) -> None:
        if self.env_id is None or not self.has_tasks:
            return
        try:
            self.registry.resolve_task(self.env_id, task)
        except (TaskNotFound, TypeError) as exc:
            raise TaskNotFound(f"sample {index} (task_name {self.task_name!r}): {exc}") from None

    def make(self, task: Any) -> Any:
        if self.factory is not None:
            return self.factory(task)
        return self.registry.make(self.env_id, task=task)


def batch_samples(batch: Any) -> list[Mapping[str, Any]]:
    if isinstance(batch, Mapping):  # columns, like a BatchedDataDict
        lengths = {key: len(values) for key, values in batch.items()}
        if len(set(lengths.values())) > 1:
            raise ConfigError(f"batch columns have different lengths: {lengths}")
        count = next(iter(lengths.values()), 0)
        return [{key: values[index] for key, values in batch.items()} for index in range(count)]
    try:
        rows = list(batch)
    except TypeError:
        raise ConfigError(
            f"batch must be a list of sample dicts, a datasets.Dataset or a dict of columns, got {type(batch).__name__}"
        ) from None
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ConfigError(
                f"sample {index} is a {type(row).__name__}; each sample must be a dict with 'task_name' and 'task'"
            )
    return rows


def plan_routes(samples: Sequence[Mapping[str, Any]], task_to_env: Mapping[str, TaskEnv], registry: Any) -> list[Route]:
    if not isinstance(task_to_env, Mapping) or not task_to_env:
        raise ConfigError("task_to_env must map task names to env ids or env factories, e.g. {'sql': 'sql/shop-v0'}")
    routes = {name: Route(name, source, registry) for name, source in task_to_env.items()}
    known = sorted(routes)
    plan = []
    for index, sample in enumerate(samples):
        clashes = sorted(set(sample) & set(RESULT_COLUMNS))
        if clashes:
            raise ConfigError(
                f"sample {index} has field(s) {', '.join(clashes)}, which the rollout writes; rename them"
            )
        name = sample.get("task_name")
        wanted = ("task_name",) if getattr(routes.get(name), "batched", False) else ("task_name", "task")
        missing = [key for key in wanted if key not in sample]
        if missing:
            raise ConfigError(f"sample {index} has no {' or '.join(repr(key) for key in missing)} field")
        if name not in routes:
            raise ConfigError(
                f"sample {index} has task_name {name!r}, which task_to_env does not map."
                f"{did_you_mean(str(name), known)} "
                f"Known task names: {', '.join(known)}."
            )
        routes[name].check(routes[name].task_of(sample), index)
        plan.append(routes[name])
    return plan
