"""Episodes whose score the evidence puts on the simulated user, the env or the grader are left
out of GRPO training by default (issue 48): reward ``None`` (out of the group baseline, no
advantage), every token masked; ``mask_attributed=()`` trains on them.

The episodes are real ``workflow/refund-conv-v0`` conversations: a scripted agent asks for the
order number, a model-driven user (a callable) names an order its scenario does not hold on
even members and the right one on odd ones, and the agent gives up either way (all fail).
"""

from __future__ import annotations

from typing import Any

import pytest
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import RolloutFunction
from rolloutgym_trl._attribution import checked_parties
from rolloutgym_trl.rollout import episode_figures
from rolloutgym_trl.rollout_fields import _fields

pytest.importorskip("rolloutgym_workflow")

KEY = "workflow/refund-conv-v0#conv_full_refund-1"  # Alice, order O-5001


class _Agent:
    def __call__(self, observation: Any) -> dict[str, Any]:
        if not any(m.get("content", "").startswith("It is") for m in observation if isinstance(m, dict)):
            return {"role": "assistant", "content": "Which order is it? Please give me the order number."}
        return {"role": "assistant", "content": "Sorry, I cannot help with that."}


class _User:
    """Even episodes (by construction order) name order O-7777, odd ones O-5001."""

    made = 0

    def __init__(self) -> None:
        self.order = "O-7777" if _User.made % 2 == 0 else "O-5001"
        _User.made += 1
        self.replies = [f"It is {self.order}.", "Thanks. ###STOP###"]

    def __call__(self, observation: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": self.replies.pop(0) if self.replies else "ok ###STOP###"}


class _Users:
    """``user_policy``: a fresh callable user per episode (``for_env`` is asked once per episode)."""

    def __call__(self, observation: Any) -> dict[str, Any]:  # pragma: no cover - for_env is used
        raise AssertionError

    def for_env(self, env: Any) -> _User:
        return _User()


def _play(**options: Any) -> Any:
    _User.made = 0
    rollout = RolloutFunction(batched=False, concurrency=1, env_kwargs={"user_policy": _Users()}, **options)
    groups = rollout._play([(KEY, 4)], _Agent())
    return rollout, groups


def test_user_attributed_failures_are_masked_by_default_and_kept_on_request() -> None:
    rollout, groups = _play()
    (group,) = groups
    parties = [(score.metadata.get("attribution") or {}).get("party") for score in group.scores]
    assert parties.count("user") == 2 and parties.count(None) == 2
    assert group.masked == {index for index, party in enumerate(parties) if party == "user"}
    assert [reward is None for reward in group.rewards] == [party == "user" for party in parties]
    fields = _fields(groups, pad=0)
    for index, party in enumerate(parties):
        assert (fields["env_reward"][index] is None) == (party == "user")
        assert fields["env_score"][index]["value"] == 0.0  # the score itself is still there to read
    assert not any(any(fields["env_mask"][index]) for index in group.masked)
    figures = episode_figures(groups)  # what trackers plot: each Score component's mean, each stop reason's share
    assert figures["rolloutgym/reward/state"] == 0.0
    assert sum(value for name, value in figures.items() if name.startswith("rolloutgym/stop/")) == 1.0
    _, kept = _play(mask_attributed=())
    assert kept[0].masked == set() and None not in kept[0].rewards


def test_mask_attributed_names_its_parties_or_fails_clearly() -> None:
    assert checked_parties("user, env") == {"user", "env"} and checked_parties("none") == frozenset()
    with pytest.raises(ConfigError, match="unknown party 'users'.*agent, user, env, grader"):
        RolloutFunction(mask_attributed="users")
