"""A run streams its finished groups to the run file and keeps only their numbers (issue 32): memory
does not grow with the run's length; the progress bar counts episodes as each one ends."""

from __future__ import annotations

import asyncio
import gc
import io
from pathlib import Path

import pytest
import rolloutgym as rg
from rich.console import Console
from rolloutgym.cli import running
from rolloutgym.runner import RunConfig
from rolloutgym_protocol import TrajectoryGroup


def _live_groups() -> int:
    gc.collect()
    # type() reads no attribute: isinstance() would ask lazy module proxies (torch's) for __class__,
    # which warns under -W error when another test imported them
    return sum(type(item) is TrajectoryGroup for item in gc.get_objects())


def _run_counting(out: Path | None) -> tuple[list[int], rg.RunResult]:
    """Run every task of toy/arith-v0 (40), counting the groups alive as each group is reported."""
    alive: list[int] = []
    result = rg.run(
        "toy/arith-v0",
        policy="oracle",
        num_rollouts=2,
        seed=5,
        concurrency=4,
        out=out,
        on_group=lambda index, group: alive.append(_live_groups() if index in (20, 39) else -1),
    )
    return alive, result


def test_finished_groups_are_not_held_during_a_run(tmp_path: Path) -> None:
    baseline = _live_groups()
    streamed, result = _run_counting(tmp_path / "run.jsonl")
    assert len(streamed) == 40
    # Only the groups in flight (concurrency 4) and the one being reported are alive, not the 40 finished.
    assert max(streamed) - baseline <= 6, streamed
    assert max(streamed) > baseline  # the count sees the group being reported
    held, in_memory = _run_counting(None)  # without a run file the run must hold them: the count can fail
    assert held[-1] - baseline >= 39, held
    # The groups are read back from the file when asked, equal to a run that held them.
    assert [group.to_dict()["scores"] for group in result.groups] == [
        group.to_dict()["scores"] for group in in_memory.groups
    ]
    timeless = [dict(run.summary.to_dict(), total_seconds=0) for run in (result, in_memory)]
    assert timeless[0] == timeless[1]
    assert result.task_indices == in_memory.task_indices == list(range(40))


def test_resume_keeps_facts_not_groups_and_summarises_the_whole_file(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    rg.run("toy/arith-v0", policy="oracle", num_rollouts=2, seed=1, out=out)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:11]))  # the header and 10 groups
    resumed = rg.run("toy/arith-v0", policy="oracle", num_rollouts=2, seed=1, out=out, resume=True)
    assert resumed.summary.num_tasks == 40 and resumed.summary.pass_rate == 1.0
    assert len(resumed.groups) == 40 and resumed.task_indices == list(range(40))


def test_every_episode_is_reported_before_its_group() -> None:
    events: list[tuple[str, int]] = []
    rg.run(
        "toy/guess-v0",
        policy="oracle",
        num_rollouts=3,
        limit=4,
        on_member=lambda index, member: events.append(("member", index)),
        on_group=lambda index, group: events.append(("group", index)),
    )
    assert sum(kind == "member" for kind, _ in events) == 12
    for position, (kind, index) in enumerate(events):
        if kind == "group":
            assert sum(event == ("member", index) for event in events[:position]) == 3


def test_the_progress_bar_counts_episodes(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(running, "error_console", Console(file=buffer, width=200, force_terminal=False))
    config = RunConfig(env="toy/arith-v0", policy="oracle", num_rollouts=3, limit=4)
    result = asyncio.run(running._run_with_progress(config, show=True))
    assert result.summary.num_trajectories == 12
    assert "12/12 episodes" in buffer.getvalue() and "left" in buffer.getvalue()
