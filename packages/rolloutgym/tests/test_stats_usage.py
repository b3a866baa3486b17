"""``rolloutgym show`` counts a server's reported usage when the run has no token ids (OpenAI-compatible runs)."""

from __future__ import annotations

from rolloutgym.runs import group_facts, summarize
from rolloutgym_protocol import Score, Step, Trajectory, TrajectoryGroup


def _step(policy_info: dict, tokens: tuple[int, ...] | None = None) -> Step:
    return Step(
        observation="q",
        action="a",
        reward=1.0,
        next_observation=None,
        terminated=True,
        truncated=False,
        policy_info=policy_info,
        policy_tokens=tokens,
    )


def test_usage_counts_when_there_are_no_token_ids() -> None:
    steps = (
        _step({"usage": {"prompt_tokens": 30, "completion_tokens": 5}}),
        _step({"usage": {"prompt_tokens": 40, "completion_tokens": 7}}),
    )
    group = TrajectoryGroup(
        item="t",
        item_id="t",
        trajectories=(Trajectory(initial_observation="q", steps=steps, terminated=True),),
        scores=(Score(1.0),),
    )
    facts = group_facts(group)
    assert (facts.generated_tokens, facts.total_tokens) == (12, 82)
    summary = summarize([group])
    assert summary.generated_tokens == 12 and summary.total_tokens == 82


def test_token_ids_win_over_usage() -> None:
    steps = (_step({"usage": {"prompt_tokens": 30, "completion_tokens": 5}}, tokens=(1, 2, 3)),)
    group = TrajectoryGroup(
        item="t",
        item_id="t",
        trajectories=(Trajectory(initial_observation="q", steps=steps, terminated=True),),
        scores=(Score(1.0),),
    )
    assert group_facts(group).generated_tokens == 3
