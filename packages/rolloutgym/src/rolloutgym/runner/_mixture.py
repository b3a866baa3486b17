"""A run over an env mixture (``RunConfig.mix``): one run file, groups tagged with their env."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from ..executors import Executor, GroupJob, get_executor
from ..rollouts import planned_seeds
from ..runs import RunWriter
from ..sources import EnvSource, PolicySource, ResolvedEnv, resolve_env, resolve_policy
from ._collect import _Finished, _member_hook, _run_jobs
from ._config import RunConfig, RunResult
from ._plan import _header, _jobs, select_tasks


def _mixture_header(
    config: RunConfig,
    entries: Sequence[Any],
    resolved: list[ResolvedEnv],
    chosen: dict[str, list[tuple[int, str]]],
    order: list[tuple[str, int]],
) -> dict[str, Any]:
    from ..mixtures import mixture_label

    positions = [(position, f"{env}:{chosen[env][k][1]}") for position, (env, k) in enumerate(order)]
    header = _header(config, resolved[0], positions)
    header["env"] = {
        "id": mixture_label(
            [type(entry)(env.env_id, entry.weight) for entry, env in zip(entries, resolved, strict=True)]
        ),
        "version": None,
        "source": "mixture",
        "plugin": None,
        "plugin_version": None,
        "replayable": all(env.replayable for env in resolved),
    }
    header["mixture"] = [
        {
            "id": env.env_id,
            "version": env.version,
            "source": env.origin,
            "plugin": env.plugin,
            "plugin_version": env.plugin_version,
            "replayable": env.replayable,
            "weight": entry.weight,
            "tasks": [identifier for _, identifier in chosen[env.env_id]],
            "task_indices": [index for index, _ in chosen[env.env_id]],
            "positions": [position for position, (env_id, _) in enumerate(order) if env_id == env.env_id],
        }
        for entry, env in zip(entries, resolved, strict=True)
    ]
    for env in resolved:
        if env.plugin:
            header["versions"][env.plugin] = env.plugin_version
    return header


def _plan_mixture(config: RunConfig, registry: Any) -> tuple[list[Any], list[ResolvedEnv], dict[str, list], list]:
    """The mixture's entries and resolved envs, the tasks chosen from each env (their share of
    ``--limit``), and the run order: ``(env_id, k)`` for the k-th chosen task of an env."""
    from ..mixtures import allocate, interleave, parse_mixture

    if config.tasks:
        raise ConfigError("--tasks names tasks of one env; with --mix use --limit and --split to choose tasks")
    entries = parse_mixture(config.mix)
    resolved = [resolve_env(EnvSource(entry.env, dict(config.env_kwargs)), registry) for entry in entries]
    entries = [type(entry)(env.env_id, entry.weight) for entry, env in zip(entries, resolved, strict=True)]
    if len({env.env_id for env in resolved}) != len(resolved):
        raise ConfigError("the mixture names one env twice (an id and its unversioned form?); give it one weight")
    per_env = dataclasses.replace(config, limit=None)
    selected = {env.env_id: select_tasks(env, per_env) for env in resolved}
    counts = allocate(entries, {env_id: len(tasks) for env_id, tasks in selected.items()}, config.limit)
    chosen = {env_id: tasks[: counts[env_id]] for env_id, tasks in selected.items()}
    return entries, resolved, chosen, interleave(entries, counts)


def _mixture_jobs(
    config: RunConfig,
    resolved: list[ResolvedEnv],
    chosen: dict[str, list],
    position_of: dict[tuple[str, int], int],
    finished: _Finished,
) -> dict[str, list[GroupJob]]:
    """The groups still to run, per env; seeds follow the run order, as in a one-env run."""
    jobs: dict[str, list[GroupJob]] = {}
    for env in resolved:
        for job in _jobs(config, env, chosen[env.env_id]):
            position = position_of[(env.env_id, job.task_index)]
            if position in finished:
                continue
            if config.seed is not None:
                job.seeds = planned_seeds(config.seed + position * config.num_rollouts, config.num_rollouts)
            jobs.setdefault(env.env_id, []).append(job)
    return jobs


async def _arun_mixture(
    config: RunConfig,
    registry: Any,
    policy: Any,
    executor: Executor | str | None,
    on_start: Callable[[dict[str, Any], int], None] | None,
    on_group: Callable[[int, TrajectoryGroup], None] | None,
    on_member: Callable[[int, int], None] | None = None,
) -> RunResult:
    """A run over an env mixture (``config.mix``): one run file, groups tagged with their env."""
    entries, resolved, chosen, order = _plan_mixture(config, registry)
    header = _mixture_header(config, entries, resolved, chosen, order)
    resolved_policy = resolve_policy(PolicySource(config.policy, dict(config.policy_options)), registry, policy=policy)
    if isinstance(executor, str):
        config.executor, executor = executor, None
    runner = executor or get_executor(config.executor, **config.executor_options)
    if not isinstance(runner, Executor):
        raise ConfigError(f"executor must be 'local', 'ray' or an rolloutgym Executor, got {type(runner).__name__}")
    header["options"]["executor"] = getattr(runner, "name", config.executor)
    header["options"]["mix"] = header["env"]["id"]
    writer = RunWriter(config.out, header, resume=config.resume) if config.out is not None else None
    finished = _Finished(writer)
    if writer is not None:
        header = writer.header
    position_of = {(env, chosen[env][k][0]): position for position, (env, k) in enumerate(order)}
    jobs = _mixture_jobs(config, resolved, chosen, position_of, finished)
    if on_start is not None:
        on_start(header, sum(len(env_jobs) for env_jobs in jobs.values()))

    def recorder(env_id: str) -> Callable[[GroupJob, TrajectoryGroup], None]:
        def record(job: GroupJob, group: TrajectoryGroup) -> None:
            position = position_of[(env_id, job.task_index)]
            group.metadata["env_id"] = env_id
            finished.add(position, group)
            if on_group is not None:
                on_group(position, group)

        return record

    async def every_env() -> None:
        # Envs run one after another, each with the run's concurrency (an executor runs one env at a time).
        for env in resolved:
            if jobs.get(env.env_id):
                await runner.run(
                    env,
                    resolved_policy,
                    jobs[env.env_id],
                    concurrency=config.concurrency,
                    on_group=recorder(env.env_id),
                    **_member_hook(
                        runner, on_member, lambda job, env_id=env.env_id: position_of[(env_id, job.task_index)]
                    ),
                )

    await _run_jobs(every_env(), writer)
    indices = [position for position in range(len(order)) if position in finished]
    return finished.result(config, header, indices, [])
