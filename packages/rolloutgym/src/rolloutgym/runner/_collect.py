"""Handing a run's jobs to an executor and keeping what it finishes (the run file, the facts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup

from ..executors import Executor, GroupJob, reports_members
from ..runs import GroupFacts, RunWriter, group_facts, summarize
from ._config import RunConfig, RunResult


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
