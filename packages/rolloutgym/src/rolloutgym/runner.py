"""Running an environment's tasks with a policy and writing a run file.

This is what ``rolloutgym run`` does; from Python::

    import rolloutgym as rg
    result = rg.run("toy/guess-v0", policy="oracle", num_rollouts=4, out="runs/guess.jsonl")
    print(result.summary.pass_rate)

The path of a run: :func:`arun` resolves the env and the policy once
(:mod:`rolloutgym.sources`, with the one registry it was given), picks the tasks, writes the
run file's header, and hands the resolved env, the built policy and one :class:`GroupJob`
per task to an executor; the executor runs each member (:func:`rolloutgym.rollouts.run_member`)
and reports finished groups, which are appended to the run file as they arrive.
"""

from __future__ import annotations

import asyncio
import datetime
import platform
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from .executors import Executor, GroupJob, get_executor
from .registry import get_registry, task_split
from .runs import FORMAT_VERSION, RunSummary, RunWriter, summarize
from .sources import EnvSource, PolicySource, ResolvedEnv, resolve_env, resolve_policy

__all__ = ["RunConfig", "RunResult", "arun", "run", "select_tasks"]


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


@dataclass
class RunConfig:
    """Every option of a run (recorded in the run file's header)."""

    env: str
    policy: str = "oracle"
    num_rollouts: int = 1
    limit: int | None = None
    tasks: Sequence[str | int] | None = None
    split: str | None = None
    seed: int | None = None
    concurrency: int = 8
    max_steps: int | None = None
    timeout: float | None = None
    out: str | Path | None = None
    resume: bool = False
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    policy_options: dict[str, Any] = field(default_factory=dict)
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    pass_threshold: float = 1.0

    def validate(self) -> None:
        if self.num_rollouts < 1:
            raise ConfigError(f"-n/--num-rollouts must be at least 1, got {self.num_rollouts}")
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.limit is not None and self.limit < 0:
            raise ConfigError(f"--limit must be non-negative, got {self.limit}")
        if self.max_steps is not None and self.max_steps < 0:
            raise ConfigError(f"--max-steps must be non-negative, got {self.max_steps}")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"--timeout must be a positive number of seconds, got {self.timeout}")
        if self.resume and self.out is None:
            raise ConfigError("--resume needs --out RUN_FILE (the run file to continue)")


@dataclass
class RunResult:
    """The finished run: its file (if any), header, groups in task order, and summary."""

    path: Path | None
    header: dict[str, Any]
    groups: list[TrajectoryGroup]
    task_indices: list[int]
    summary: RunSummary


def select_tasks(resolved: ResolvedEnv, config: RunConfig) -> list[tuple[int, str]]:
    """The ``(index, id)`` of the tasks a run covers, after --split, --tasks and --limit."""
    selected = list(enumerate(resolved.task_ids))
    if config.split is not None:
        splits = sorted({task_split(item) or "" for item in resolved.tasks if item is not None} - {""})
        selected = [(index, identifier) for index, identifier in selected if task_split(resolved.tasks[index]) == config.split]
        if not selected:
            raise ConfigError(f"{resolved.env_id} has no tasks in split '{config.split}'; its splits are: {', '.join(splits) or 'none'}")
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

                raise ConfigError(f"{resolved.env_id} has no task '{text}'.{did_you_mean(text, list(by_id))} Run 'rolloutgym info {resolved.env_id}' to list its tasks.")
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
        if config.seed is None:
            seeds: list[int | None] = [None] * config.num_rollouts
        else:
            base = config.seed + position * config.num_rollouts
            seeds = [base + member for member in range(config.num_rollouts)]
        jobs.append(GroupJob(index, identifier, config.num_rollouts, seeds, None, max_steps, timeout))
    return jobs


async def arun(
    config: RunConfig,
    *,
    registry: Any = None,
    policy: Any = None,
    executor: Executor | None = None,
    on_start: Callable[[dict[str, Any], int], None] | None = None,
    on_group: Callable[[int, TrajectoryGroup], None] | None = None,
) -> RunResult:
    """Run ``config`` and return the result; writes ``config.out`` group by group.

    Args:
        policy: an already-built policy object (overrides ``config.policy`` for the
            in-process executor; ``config.policy`` is still recorded as its name).
        on_start: called with the header and the number of groups still to run.
        on_group: called with each finished group's task index.
    """
    config.validate()
    registry = registry if registry is not None else get_registry()
    resolved = resolve_env(EnvSource(config.env, dict(config.env_kwargs)), registry)
    tasks = select_tasks(resolved, config)
    header = _header(config, resolved, tasks)
    # Built before any rollout, so a bad --policy fails fast.
    resolved_policy = resolve_policy(PolicySource(config.policy, dict(config.policy_options)), registry, policy=policy)
    if isinstance(executor, str):
        config.executor, executor = executor, None
    chosen = executor or get_executor(config.executor, **config.executor_options)
    if not isinstance(chosen, Executor):
        raise ConfigError(f"executor must be 'local', 'ray' or an rolloutgym Executor, got {type(chosen).__name__}")
    header["options"]["executor"] = getattr(chosen, "name", config.executor)
    writer = RunWriter(config.out, header, resume=config.resume) if config.out is not None else None
    finished: dict[int, TrajectoryGroup] = {}
    if writer is not None:
        header = writer.header
        finished.update({index: group for index, group in writer.groups})
    jobs = [job for job in _jobs(config, resolved, tasks) if job.task_index not in finished]
    if on_start is not None:
        on_start(header, len(jobs))

    def record(job: GroupJob, group: TrajectoryGroup) -> None:
        finished[job.task_index] = group
        if writer is not None:
            writer.write_group(job.task_index, group)
        if on_group is not None:
            on_group(job.task_index, group)

    try:
        if jobs:
            await chosen.run(resolved, resolved_policy, jobs, concurrency=config.concurrency, on_group=record)
    finally:
        if writer is not None:
            writer.close()
    order = [index for index, _ in tasks if index in finished]
    groups = [finished[index] for index in order]
    summary = summarize(groups, header=header, task_indices=order)
    return RunResult(Path(config.out) if config.out is not None else None, header, groups, order, summary)


def run(config: RunConfig | str, **overrides: Any) -> RunResult:
    """Synchronous :func:`arun`. ``run("toy/guess-v0", policy="oracle", num_rollouts=2)``."""
    hooks = {key: overrides.pop(key) for key in ("registry", "executor", "on_start", "on_group") if key in overrides}
    policy_object = overrides.pop("policy_object", None)
    if isinstance(config, str):
        config = RunConfig(env=config, **overrides)
    elif overrides:
        raise TypeError("pass options either in RunConfig or as keywords, not both")
    return asyncio.run(arun(config, policy=policy_object, **hooks))
