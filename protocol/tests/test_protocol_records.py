"""Records and scores: frozen, cheap, exact JSON round trips; validation of step results."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rolloutgym_protocol import (
    PolicyOutput,
    RolloutError,
    Score,
    Step,
    Trajectory,
    TrajectoryGroup,
    validate_step_result,
)
from rolloutgym_protocol.errors import InvalidStepResult

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)
scores = st.recursive(
    st.builds(lambda v: Score(v), st.floats(-5, 5)),
    lambda children: st.builds(
        lambda v, comps, fb: Score(v, comps, {"k": 1}, feedback=fb),
        st.floats(-5, 5),
        st.dictionaries(st.text(min_size=1, max_size=4), children, max_size=3),
        st.one_of(st.none(), st.text(min_size=1, max_size=8).filter(str.strip)),
    ),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(score=scores)
def test_score_round_trips_through_json(score: Score) -> None:
    assert Score.from_dict(json.loads(json.dumps(score.to_dict()))) == score
    assert Score.from_info(score.as_info()) == score
    assert pickle.loads(pickle.dumps(score)) == score


def test_score_rules() -> None:
    with pytest.raises(ValueError, match="finite"):
        Score(float("nan"))
    with pytest.raises(ValueError):
        Score(1.0, feedback="   ")
    assert Score(True).value == 1.0
    assert Score.from_info({}, default=Score(0.5)) == Score(0.5)
    with pytest.raises(TypeError):
        Score.from_info({"score": 3})
    with pytest.raises(TypeError):
        hash(Score(1.0))
    assert Score(1, {"a": 0.5}).component_values == {"a": 0.5}


@settings(max_examples=60, deadline=None)
@given(
    observation=json_values,
    action=json_values,
    reward=st.floats(-100, 100),
    info=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
def test_trajectory_group_round_trips_through_json(observation, action, reward, info) -> None:
    step = Step(
        observation, action, reward, observation, True, False, info, {"p": 1}, (1, 2), (-0.1, -0.2), "stop", (5,)
    )
    trajectory = Trajectory(observation, (step,), {}, True, False, {"member": 0}, "terminated")
    group = TrajectoryGroup({"q": 1}, "t1", (trajectory,), errors=(RolloutError("ValueError", "boom", "env", 1),))
    data = json.loads(json.dumps(group.to_dict()))
    assert TrajectoryGroup.from_dict(data).to_dict() == data
    assert TrajectoryGroup.from_dict(data) == group


def test_records_derive_what_rolloutlib_derives() -> None:
    steps = (
        Step("o0", 1, 1, "o1", False, False),
        Step("o1", 2, 2.5, "o2", True, False, {"score": Score(0.7).to_dict()}),
    )
    trajectory = Trajectory("o0", steps, terminated=True)
    assert trajectory.observations == ("o0", "o1", "o2")
    assert trajectory.actions == (1, 2)
    assert trajectory.total_reward == 3.5
    assert trajectory.score == Score(0.7)
    group = TrajectoryGroup(None, "x", (trajectory, Trajectory("o", ())))
    assert group.rewards == (0.7, 0.0)
    with pytest.raises(ValueError, match="one entry per trajectory"):
        TrajectoryGroup(None, "x", (trajectory,), scores=(Score(1), Score(0)))


def test_policy_output_fills_sampling_fields_from_info() -> None:
    output = PolicyOutput("a", {"tokens": [1, 2], "logprobs": [-1, -2], "stop_reason": "stop"})
    assert output.tokens == (1, 2) and output.logprobs == (-1.0, -2.0) and output.stop_reason == "stop"
    assert PolicyOutput("a", {"tokens": "12"}).tokens is None


@pytest.mark.parametrize(
    "result, message",
    [
        (("o", float("nan"), True, False, {}), "finite"),
        (("o", 1.0, 1, False, {}), "flags must be bool"),
        (("o", "1", True, False, {}), "must be numbers"),
        (("o", 1.0, True, False, []), "info must be a dict"),
        (("o", 1.0, True), "5-tuple"),
    ],
)
def test_step_results_are_validated(result, message) -> None:
    with pytest.raises(InvalidStepResult, match=message):
        validate_step_result(result, step_index=3)


def test_numpy_values_are_accepted_and_converted() -> None:
    observation, reward, terminated, truncated, _ = validate_step_result(
        (np.int64(1), np.float32(0.5), np.bool_(True), False, {})
    )
    assert reward == 0.5 and terminated is True and type(reward) is float
    step = Step(np.array([1, 2]), np.int64(3), 1.0, np.float64(2.0), True, False)
    assert step.to_dict()["observation"] == [1, 2] and step.to_dict()["action"] == 3
    assert not math.isnan(step.reward)
