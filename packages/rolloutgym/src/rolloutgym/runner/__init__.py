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
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from ..executors import Executor, GroupJob, get_executor
from ..registry import get_registry
from ..runs import RunWriter
from ..sources import EnvSource, PolicySource, resolve_env, resolve_policy
from ._collect import _Finished, _member_hook, _run_jobs
from ._config import MAX_ROLLOUTS_PER_TASK, RunConfig, RunResult
from ._mixture import _arun_mixture
from ._plan import _header, _jobs, select_tasks

__all__ = ["MAX_ROLLOUTS_PER_TASK", "RunConfig", "RunResult", "arun", "run", "select_tasks"]


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
    chosen = executor or _executor_for(config)
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


def _executor_for(config: RunConfig) -> Executor:
    if config.branch_at is not None:
        from ..executors.tree import TreeExecutor

        return TreeExecutor(config.branch_at)
    return get_executor(config.executor, **config.executor_options)


def run(config: RunConfig | str | Mapping[str, float], **overrides: Any) -> RunResult:
    """Run rollouts and write a run file; the synchronous :func:`arun`.

    ``run("toy/guess-v0", policy="oracle", num_rollouts=2, out="runs/guess.jsonl")``; a mapping
    of env ids to weights runs a mixture: ``run({"sql/shop-v0": 2, "toy/arith-v0": 1})``.

    Args:
        config: an env id or env file, an env mixture (``{env_id: weight}``), or a :class:`RunConfig`.
        **overrides: the :class:`RunConfig` fields (``policy``, ``num_rollouts``, ``limit``,
            ``tasks``, ``split``, ``seed``, ``concurrency``, ``max_steps``, ``timeout``, ``out``,
            ``resume``, ``env_kwargs``, ``policy_options``, ``executor``, ``executor_options``,
            ``pass_threshold``, ``mix``, ``branch_at``) when ``config`` is not a RunConfig; ``policy`` may also
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
        overrides["policy"] = _policy_name(policy_object)  # recorded in the header as its name, not "oracle"
    if isinstance(config, Mapping):  # {"sql/shop-v0": 2, "workflow/refund-v0": 1}: an env mixture
        config = RunConfig(env="", mix=dict(config), **overrides)
    elif isinstance(config, str):
        config = RunConfig(env=config, **overrides)
    elif overrides:
        raise TypeError("pass options either in RunConfig or as keywords, not both")
    return asyncio.run(arun(config, policy=policy_object, **hooks))


def _policy_name(policy: Any) -> str:
    """The name a policy object is recorded under: its ``name`` attribute, a function's name, else its class's."""
    name = getattr(policy, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(policy, "__name__", None) or type(policy).__name__)


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
