"""Slotted steps and the shared read-only empty dict behave like the records they replace.

Issue 19 halved the memory a finished trajectory keeps: ``Step`` has ``__slots__`` and empty
info dicts (and a ``Score``'s empty components/metadata) are one shared ``SHARED_EMPTY``.
These tests pin what a user relies on: equality, repr, JSON, pickling, copying, replace,
and a clear error (not silent sharing) when someone writes to a shared empty dict.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import pytest
from rolloutgym_protocol import Score, Step, Trajectory, TrajectoryGroup
from rolloutgym_protocol.records import SHARED_EMPTY


def engine_step(info: dict | None = None) -> Step:
    return Step._trusted(0, 1, 1.0, 1, True, False, SHARED_EMPTY if info is None else info, SHARED_EMPTY)


def test_trusted_step_equals_and_prints_like_a_constructed_step() -> None:
    fast = engine_step()
    built = Step(0, 1, 1.0, 1, True, False)
    assert type(fast) is Step
    assert fast == built and built == fast
    assert repr(fast) == repr(built)
    assert "info={}, policy_info={}" in repr(fast)
    assert not hasattr(fast, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.reward = 2.0  # type: ignore[misc]


def test_trusted_step_of_a_subclass_is_that_subclass() -> None:
    class Tagged(Step):
        pass

    step = Tagged._trusted(0, 1, 1.0, 1, True, False, {"k": 1}, {})
    assert type(step) is Tagged
    assert step.info == {"k": 1} and step.policy_tokens is None


def test_shared_empty_reads_as_an_empty_dict() -> None:
    assert isinstance(SHARED_EMPTY, dict)
    assert SHARED_EMPTY == {} and {} == SHARED_EMPTY
    assert repr(SHARED_EMPTY) == "{}"
    assert json.dumps(SHARED_EMPTY) == "{}"
    assert SHARED_EMPTY | {"a": 1} == {"a": 1}
    assert SHARED_EMPTY.get("missing") is None and list(SHARED_EMPTY.items()) == []
    own = dict(SHARED_EMPTY)
    own["a"] = 1
    assert SHARED_EMPTY == {}


@pytest.mark.parametrize(
    "write",
    [
        lambda d: d.__setitem__("a", 1),
        lambda d: d.update(a=1),
        lambda d: d.setdefault("a", 1),
        lambda d: d.pop("a", None),
        lambda d: d.clear(),
        lambda d: d.__ior__({"a": 1}),
    ],
)
def test_writing_to_the_shared_empty_dict_raises_with_the_fix(write) -> None:
    step = engine_step()
    with pytest.raises(TypeError, match=r"read-only.*dict\(step\.info\)"):
        write(step.info)
    assert SHARED_EMPTY == {}


def test_steps_pickle_copy_and_replace() -> None:
    step = engine_step()
    for clone in (pickle.loads(pickle.dumps(step)), copy.copy(step), copy.deepcopy(step)):
        assert clone == step
        assert clone.info is SHARED_EMPTY  # one shared object in every process
    replaced = dataclasses.replace(step, reward=0.5)
    assert replaced.reward == 0.5 and replaced.info is SHARED_EMPTY
    as_dict = dataclasses.asdict(step)
    as_dict["info"]["mine"] = True  # asdict hands back plain dicts of the caller's own
    assert step.info == {}


def test_to_dict_round_trip_of_engine_steps() -> None:
    step = engine_step()
    data = step.to_dict()
    assert data["info"] == {} and type(data["info"]) is dict
    assert json.loads(json.dumps(data)) == data
    assert Step.from_dict(data) == step


def test_scores_share_their_empty_parts_and_keep_their_own() -> None:
    plain = Score(1.0)
    assert plain.components is SHARED_EMPTY and plain.metadata is SHARED_EMPTY
    assert plain == Score(1.0, {}, {}) and repr(plain) == "Score(1.0)"
    assert pickle.loads(pickle.dumps(plain)) == plain
    given = {"source": "judge"}
    rich = Score(0.5, {"format": 1.0}, given)
    assert rich.metadata == given and rich.metadata is not given
    rich.metadata["note"] = "still a dict of its own"
    assert Score.from_dict(plain.to_dict()) == plain


def test_trajectory_keeps_shared_initial_info_and_one_step_total() -> None:
    trajectory = Trajectory(0, (engine_step(),), SHARED_EMPTY, True, False, {"member": 3}, "terminated")
    assert trajectory.initial_info is SHARED_EMPTY
    assert trajectory.total_reward == 1.0 and type(trajectory.total_reward) is float
    negative_zero = Step(0, 1, -0.0, 1, True, False)
    assert str(Trajectory(0, (negative_zero,)).total_reward) == "0.0"  # as sum() gave
    group = TrajectoryGroup(0, "0", (trajectory,))
    assert group.scores == (Score(1.0),)
    assert pickle.loads(pickle.dumps(group)).trajectories == (trajectory,)
