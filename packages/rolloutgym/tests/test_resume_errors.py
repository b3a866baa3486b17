"""Failed episodes keep their turns; --resume re-runs groups that hold only errors (issue 17, class 6)."""

from __future__ import annotations

import json
from pathlib import Path

from rolloutgym import rollout_group
from rolloutgym.registry import get_registry
from rolloutgym.runs import RunWriter, read_run
from rolloutgym_protocol import RolloutError, Score, Step, Trajectory, TrajectoryGroup


class DiesAtTurn:
    """Guesses 50 with the guess tool, then raises (a model server gone) at ``turn``."""

    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.calls = 0

    def __call__(self, observation: object) -> object:
        self.calls += 1
        if self.calls >= self.turn:
            raise ConnectionError("model server gone")
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{self.calls}", "name": "guess", "arguments": {"number": 50}}],
        }


def test_a_failed_episode_keeps_the_turns_it_played() -> None:
    registry = get_registry()
    group = rollout_group(0, lambda item: registry.make("toy/guess-v0", task=item), DiesAtTurn(3), num_rollouts=1)
    (error,) = group.errors
    assert error.where == "policy" and error.error_type == "ConnectionError"
    assert error.partial is not None and len(error.partial.steps) == 2
    assert error.partial.stop_reason == "error"
    back = TrajectoryGroup.from_dict(json.loads(json.dumps(group.to_dict(), allow_nan=False)))
    assert back.errors[0].partial is not None and back.errors[0].partial.actions == error.partial.actions


def _group(index: int, *, failed: bool) -> TrajectoryGroup:
    if failed:
        partial = Trajectory("start", (Step("start", "a", 0.0, "next", False, False),))
        return TrajectoryGroup(
            index, f"t{index}", (), errors=(RolloutError("ConnectionError", "down", "policy", 0, partial=partial),)
        )
    trajectory = Trajectory("start", (Step("start", "a", 1.0, "end", True, False),), terminated=True)
    return TrajectoryGroup(index, f"t{index}", (trajectory,), (Score(1.0),))


def _header() -> dict:
    return {
        "kind": "header",
        "format_version": 1,
        "run_id": "r",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": "toy/guess-v0"},
        "policy": "p",
        "num_rollouts": 1,
        "seed": None,
        "tasks": ["t0", "t1", "t2"],
        "task_indices": [0, 1, 2],
    }


def test_resume_drops_error_only_groups_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunWriter(path, _header()) as writer:
        writer.write_group(0, _group(0, failed=False))
        writer.write_group(1, _group(1, failed=True))
        writer.write_group(2, _group(2, failed=True))
    header_line = path.read_text(encoding="utf-8").splitlines()[0]
    with RunWriter(path, _header(), resume=True) as resumed:
        assert resumed.retried == [1, 2]
        assert resumed.done == {0}
        resumed.write_group(1, _group(1, failed=False))
    run = read_run(path)
    assert run.task_indices == [0, 1]  # task 2 still to run; no duplicate lines
    assert path.read_text(encoding="utf-8").splitlines()[0] == header_line
    with RunWriter(path, _header(), resume=True, retry_errors=False) as kept:
        assert kept.retried == [] and kept.done == {0, 1}
