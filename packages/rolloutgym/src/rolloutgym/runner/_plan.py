"""What a run covers: the tasks it selects, its run-file header, one :class:`GroupJob` per task."""

from __future__ import annotations

import datetime
import platform
import uuid
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..executors import GroupJob
from ..registry import task_split
from ..rollouts import planned_seeds
from ..runs import FORMAT_VERSION
from ..sources import ResolvedEnv
from ._config import RunConfig

__all__ = ["select_tasks"]


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def select_tasks(resolved: ResolvedEnv, config: RunConfig) -> list[tuple[int, str]]:
    """The ``(index, id)`` of the tasks a run covers, after --split, --tasks and --limit."""
    selected = list(enumerate(resolved.task_ids))
    if config.split is not None:
        splits = sorted({task_split(item) or "" for item in resolved.tasks if item is not None} - {""})
        selected = [
            (index, identifier) for index, identifier in selected if task_split(resolved.tasks[index]) == config.split
        ]
        if not selected:
            raise ConfigError(
                f"{resolved.env_id} has no tasks in split '{config.split}'; its splits are: "
                f"{', '.join(splits) or 'none'}"
            )
    if config.tasks:
        by_id = {identifier: index for index, identifier in selected}
        chosen = []
        for wanted in config.tasks:
            text = str(wanted)
            if text in by_id:
                chosen.append((by_id[text], text))
            elif text.lstrip("-").isdigit() and any(index == int(text) for index, _ in selected):
                index = int(text)
                chosen.append((index, dict((i, t) for i, t in selected)[index]))
            else:
                from rolloutgym_protocol.errors import did_you_mean

                raise ConfigError(
                    f"{resolved.env_id} has no task '{text}'.{did_you_mean(text, list(by_id))} Run 'rolloutgym info "
                    f"{resolved.info_reference}' to list its tasks."
                )
        selected = chosen
    if config.limit is not None:
        selected = selected[: config.limit]
    return selected


def _header(config: RunConfig, resolved: ResolvedEnv, tasks: list[tuple[int, str]]) -> dict[str, Any]:
    options = {
        "limit": config.limit,
        "tasks": list(map(str, config.tasks)) if config.tasks else None,
        "split": config.split,
        "concurrency": config.concurrency,
        "max_steps": config.max_steps,
        "timeout": config.timeout,
        "env_kwargs": config.env_kwargs,
        "policy_options": {key: value for key, value in config.policy_options.items() if "key" not in key.lower()},
        "executor": config.executor,
    }
    if config.branch_at is not None:
        options["branch_at"] = config.branch_at if isinstance(config.branch_at, (str, int)) else list(config.branch_at)
    versions = {
        "python": platform.python_version(),
        "rolloutgym": _version("rolloutgym"),
        "rolloutgym-protocol": _version("rolloutgym-protocol"),
    }
    if resolved.plugin:
        versions[resolved.plugin] = resolved.plugin_version
    return {
        "kind": "header",
        "format_version": FORMAT_VERSION,
        "run_id": uuid.uuid4().hex[:12],
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "env": {
            "id": resolved.env_id,
            "version": resolved.version,
            "source": resolved.origin,
            "plugin": resolved.plugin,
            "plugin_version": resolved.plugin_version,
            "replayable": resolved.replayable,
        },
        "policy": config.policy,
        "num_rollouts": config.num_rollouts,
        "seed": config.seed,
        "tasks": [identifier for _, identifier in tasks],
        "task_indices": [index for index, _ in tasks],
        "options": options,
        "versions": versions,
        "pass_threshold": config.pass_threshold,
    }


def _jobs(config: RunConfig, resolved: ResolvedEnv, tasks: list[tuple[int, str]]) -> list[GroupJob]:
    jobs = []
    max_steps = config.max_steps if config.max_steps is not None else resolved.max_steps
    timeout = config.timeout if config.timeout is not None else resolved.timeout
    for position, (index, identifier) in enumerate(tasks):
        base = None if config.seed is None else config.seed + position * config.num_rollouts
        seeds = planned_seeds(base, config.num_rollouts)  # computed when indexed: memory does not grow with -n
        jobs.append(GroupJob(index, identifier, config.num_rollouts, seeds, None, max_steps, timeout))
    return jobs
