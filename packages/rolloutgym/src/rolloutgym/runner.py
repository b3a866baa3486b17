"""Running an environment's tasks with a policy and writing a run file.

This is what ``rolloutgym run`` does; from Python::

    import rolloutgym as rg
    result = rg.run("toy/guess-v0", policy="oracle", num_rollouts=4, out="runs/guess.jsonl")
    print(result.summary.pass_rate)

The path of a run: :func:`arun` resolves the env and the policy once
(:mod:`rolloutgym.sources`, with the one registry it was given), picks the tasks, writes the
run file's header, and hands the resolved env, the built policy and one :class:`GroupJob`
per task to an executor; the executor runs each member (:func:`rolloutgym.rollouts.run_member`)
and reports finished groups, which are appended to the run file as they arrive. With a run
file, the run keeps only each group's :class:`~rolloutgym.runs.GroupFacts` in memory (the
summary's numbers); :attr:`RunResult.groups` reads the groups back from the file when asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import inspect
import platform
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from .executors import Executor, GroupJob, get_executor, reports_members
from .registry import get_registry, task_split
from .rollouts import planned_seeds
from .runs import FORMAT_VERSION, GroupFacts, RunSummary, RunWriter, group_facts, summarize
from .sources import EnvSource, PolicySource, ResolvedEnv, resolve_env, resolve_policy

__all__ = ["RunConfig", "RunResult", "arun", "run", "select_tasks"]


# A group is held in memory until its last member ends (one run-file line): -n beyond this cannot finish.
MAX_ROLLOUTS_PER_TASK = 1_000_000


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
    mix: str | Mapping[str, float] | Sequence[Any] | None = None  # several envs with weights (see rolloutgym.mixtures)

    def validate(self) -> None:
        if self.mix is not None and self.env:
            raise ConfigError(f"give one env ({self.env!r}) or an env mixture (mix=...), not both")
        if self.mix is None and not self.env:
            raise ConfigError("a run needs an env id, an env file, or an env mixture (--mix ENV=WEIGHT,...)")
        if self.num_rollouts < 1:
            raise ConfigError(f"-n/--num-rollouts must be at least 1, got {self.num_rollouts}")
        if self.num_rollouts > MAX_ROLLOUTS_PER_TASK:
            raise ConfigError(
                f"-n {self.num_rollouts} is more rollouts per task than a run can hold: a task's group stays in memory "
                f"until its last rollout ends and is written as one run-file line, so -n is at most "
                f"{MAX_ROLLOUTS_PER_TASK:,}; for more samples of a task, run several files with different --seed"
            )
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            # One rule with the CLI: a run of no task is a mistake, not an empty success.
            raise ConfigError(f"--limit must be at least 1 (leave it out to run every selected task), got {self.limit}")
        if self.max_steps is not None and self.max_steps < 0:
            raise ConfigError(f"--max-steps must be non-negative, got {self.max_steps}")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"--timeout must be a positive number of seconds, got {self.timeout}")
        if self.resume and self.out is None:
            raise ConfigError("--resume needs --out RUN_FILE (the run file to continue)")


@dataclass
class RunResult:
    """The finished run: its file (if any), header, groups in task order, and summary.

    ``groups`` is read back from the run file on first use (a run does not hold its groups
    in memory); a run without a file (``out=None``) holds them.
    """

    path: Path | None
    header: dict[str, Any]
    held_groups: list[TrajectoryGroup] | None
    task_indices: list[int]
    summary: RunSummary
    retried: list[int] = field(default_factory=list)  # tasks --resume re-ran: their groups held only errors

    @property
    def groups(self) -> list[TrajectoryGroup]:
        """The finished groups in task order (from the run file, read once)."""
        if self.held_groups is None:
            from .runs import iter_run

            assert self.path is not None
            by_index = dict(iter_run(self.path, allow_partial_tail=True))
            self.held_groups = [by_index[index] for index in self.task_indices if index in by_index]
        return self.held_groups


class _Finished:
    """The groups a run has finished, by task index: only their facts when a run file holds them."""

    def __init__(self, writer: RunWriter | None) -> None:
        self.writer = writer
        self.facts: dict[int, GroupFacts] = dict(writer.facts) if writer is not None else {}
        self.groups: dict[int, TrajectoryGroup] = {}

    def __contains__(self, index: object) -> bool:
        return index in self.facts

    def add(self, index: int, group: TrajectoryGroup) -> None:
        if self.writer is not None:
            self.writer.write_group(index, group)
            self.facts[index] = self.writer.facts[index]
        else:
            self.groups[index] = group
            self.facts[index] = group_facts(group)

    def result(self, config: RunConfig, header: dict[str, Any], order: list[int], retried: list[int]) -> RunResult:
        summary = summarize([self.facts[index] for index in order], header=header, task_indices=order)
        held = None if self.writer is not None else [self.groups[index] for index in order]
        path = Path(config.out) if config.out is not None else None
        return RunResult(path, header, held, order, summary, retried)


def _member_hook(
    executor: Executor, on_member: Callable[[int, int], None] | None, position: Callable[[GroupJob], int]
) -> dict[str, Any]:
    """The ``on_member`` keyword for ``executor.run``: each ended episode as ``(task position, member)``."""
    if on_member is None or not reports_members(executor):
        return {}
    return {"on_member": lambda job, member: on_member(position(job), member)}


async def _run_jobs(run: Any, writer: RunWriter | None) -> None:
    """Await the executor's ``run``; a run-file write that failed ends the run with its own one-line error."""
    from rolloutgym_protocol.errors import OutputError

    try:
        await run
    except BaseExceptionGroup as group:
        matched, _ = group.split(OutputError)
        if matched is None:
            raise
        first: BaseException = matched
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    finally:
        if writer is not None:
            writer.close()


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


async def arun(
    config: RunConfig,
    *,
    registry: Any = None,
    policy: Any = None,
    executor: Executor | None = None,
    on_start: Callable[[dict[str, Any], int], None] | None = None,
    on_group: Callable[[int, TrajectoryGroup], None] | None = None,
    on_member: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Run ``config`` and return the result; writes ``config.out`` group by group.

    Args:
        policy: an already-built policy object (overrides ``config.policy`` for the
            in-process executor; ``config.policy`` is still recorded as its name).
        on_start: called with the header and the number of groups still to run.
        on_group: called with each finished group's task index.
        on_member: called with ``(task index, member)`` as each episode ends, when the
            executor reports episodes (the local one does; see ``executors.reports_members``).
    """
    config.validate()
    registry = registry if registry is not None else get_registry()
    if config.mix is not None:
        return await _arun_mixture(config, registry, policy, executor, on_start, on_group, on_member)
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
    finished = _Finished(writer)
    if writer is not None:
        header = writer.header
    jobs = [job for job in _jobs(config, resolved, tasks) if job.task_index not in finished]
    if on_start is not None:
        on_start(header, len(jobs))

    def record(job: GroupJob, group: TrajectoryGroup) -> None:
        finished.add(job.task_index, group)
        if on_group is not None:
            on_group(job.task_index, group)

    if jobs:
        work = chosen.run(
            resolved,
            resolved_policy,
            jobs,
            concurrency=config.concurrency,
            on_group=record,
            **_member_hook(chosen, on_member, lambda job: job.task_index),
        )
        await _run_jobs(work, writer)
    elif writer is not None:
        writer.close()
    order = [index for index, _ in tasks if index in finished]
    return finished.result(config, header, order, list(writer.retried) if writer is not None else [])


def _mixture_header(
    config: RunConfig,
    entries: Sequence[Any],
    resolved: list[ResolvedEnv],
    chosen: dict[str, list[tuple[int, str]]],
    order: list[tuple[str, int]],
) -> dict[str, Any]:
    from .mixtures import mixture_label

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
    from .mixtures import allocate, interleave, parse_mixture

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


def run(config: RunConfig | str | Mapping[str, float], **overrides: Any) -> RunResult:
    """Run rollouts and write a run file; the synchronous :func:`arun`.

    ``run("toy/guess-v0", policy="oracle", num_rollouts=2, out="runs/guess.jsonl")``; a mapping
    of env ids to weights runs a mixture: ``run({"sql/shop-v0": 2, "toy/arith-v0": 1})``.

    Args:
        config: an env id or env file, an env mixture (``{env_id: weight}``), or a :class:`RunConfig`.
        **overrides: the :class:`RunConfig` fields (``policy``, ``num_rollouts``, ``limit``,
            ``tasks``, ``split``, ``seed``, ``concurrency``, ``max_steps``, ``timeout``, ``out``,
            ``resume``, ``env_kwargs``, ``policy_options``, ``executor``, ``executor_options``,
            ``pass_threshold``, ``mix``) when ``config`` is not a RunConfig; ``policy`` may also
            be a policy object. Hooks: ``registry``, ``executor``, ``on_start``, ``on_group``, ``on_member``.
            An existing ``out`` file is continued with ``resume=True``.
    """
    hooks = {
        key: overrides.pop(key)
        for key in ("registry", "executor", "on_start", "on_group", "on_member")
        if key in overrides
    }
    policy_object = overrides.pop("policy_object", None)
    if "policy" in overrides and not isinstance(overrides["policy"], str):
        policy_object = overrides.pop("policy")  # a policy object, not a "provider:model" reference
    if isinstance(config, Mapping):  # {"sql/shop-v0": 2, "workflow/refund-v0": 1}: an env mixture
        config = RunConfig(env="", mix=dict(config), **overrides)
    elif isinstance(config, str):
        config = RunConfig(env=config, **overrides)
    elif overrides:
        raise TypeError("pass options either in RunConfig or as keywords, not both")
    return asyncio.run(arun(config, policy=policy_object, **hooks))


def _run_signature() -> inspect.Signature:
    """``help(rg.run)`` shows every option, not ``**overrides``."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(
            "config", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="RunConfig | str | Mapping[str, float]"
        )
    ]
    for item in dataclasses.fields(RunConfig):
        if item.name == "env":
            continue
        default = item.default if item.default is not dataclasses.MISSING else item.default_factory()  # type: ignore[misc]
        parameters.append(inspect.Parameter(item.name, keyword, default=default, annotation=item.type))
    for name in ("registry", "on_start", "on_group", "on_member"):
        parameters.append(inspect.Parameter(name, keyword, default=None))
    return inspect.Signature(parameters, return_annotation="RunResult")


run.__signature__ = _run_signature()  # type: ignore[attr-defined]
