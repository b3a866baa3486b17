"""The ``chaos`` policy (issue 17): random hostile actions that must end scored, in strict JSON.

The toy envs run here; every shipped env runs through the CLI in ``tests/e2e/test_chaos_run.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from rolloutgym import rollout
from rolloutgym.builtin._chaos import ATTACKS, ChaosPolicy, hostile_value
from rolloutgym.builtin.policies import make_chaos
from rolloutgym.registry import get_registry
from rolloutgym_protocol import Trajectory, TrajectoryGroup, jsonvalues
from rolloutgym_protocol.errors import ConfigError


def _strict(text: str) -> object:
    def refuse(token: str) -> object:
        raise AssertionError(f"non-standard JSON token {token}")

    text.encode("utf-8")
    return json.loads(text, parse_constant=refuse)


def test_chaos_is_a_registered_builtin_policy_with_a_seed() -> None:
    registry = get_registry()
    assert "chaos" in registry.policy_specs()
    policy = registry.make_policy("chaos:7")
    assert isinstance(policy, ChaosPolicy) and policy.seed == 7
    with pytest.raises(ConfigError, match="integer seed"):
        make_chaos("seven")


def _actions(env_id: str, seed: int, episodes: int) -> list[list[str]]:
    registry = get_registry()
    policy = make_chaos(str(seed))
    played = []
    for episode in range(episodes):
        environment = registry.make(env_id, task=episode % 3)
        trajectory = rollout(environment, policy, seed=episode, max_steps=6)
        environment.close()
        played.append([jsonvalues.dumps(action) for action in trajectory.actions])
    return played


def test_same_seed_same_attacks_other_seed_other_attacks() -> None:
    assert _actions("toy/guess-v0", 3, 4) == _actions("toy/guess-v0", 3, 4)
    assert _actions("toy/guess-v0", 3, 4) != _actions("toy/guess-v0", 4, 4)


@pytest.mark.parametrize("env_id", ["toy/guess-v0", "toy/arith-v0"])
def test_chaos_episodes_end_scored_and_record_as_strict_json(env_id: str) -> None:
    registry = get_registry()
    policy = make_chaos("11")
    episodes = 40 if env_id == "toy/guess-v0" else 60
    for episode in range(episodes):
        environment = registry.make(env_id, task=episode % 5)
        trajectory = rollout(environment, policy, seed=episode, max_steps=8)
        environment.close()
        assert trajectory.steps, "every episode plays at least one hostile action"
        assert trajectory.complete or trajectory.stop_reason == "max_steps"
        if trajectory.terminated:
            assert trajectory.score.value in (0.0, 1.0)  # scored, not an error
        data = _strict(json.dumps(trajectory.to_dict(), ensure_ascii=False, allow_nan=False))
        back = Trajectory.from_dict(data)  # type: ignore[arg-type]
        assert [jsonvalues.dumps(action) for action in back.actions] == [
            jsonvalues.dumps(action) for action in trajectory.actions
        ]
    assert sum(policy.attacks.values()) >= episodes


def test_every_attack_kind_is_drawn() -> None:
    """Over enough episodes of a tool env, each kind in ATTACKS is played (the docs count them)."""
    registry = get_registry()
    policy = make_chaos("5")
    for episode in range(150):
        environment = registry.make("toy/guess-v0", task=episode % 5)
        rollout(environment, policy, seed=episode, max_steps=5)
        environment.close()
    missing = set(ATTACKS) - set(policy.attacks)
    assert not missing, f"never drawn: {sorted(missing)}"


def test_hostile_values_cover_the_reviewed_classes() -> None:
    generator = random.Random(0)
    kinds = Counter()
    for name in (
        "nan",
        "inf",
        "-inf",
        "1e400 parsed",
        "int beyond str limit",
        "lone surrogate",
        "deep nesting",
        "huge string",
    ):
        value = hostile_value(generator, name)
        text = jsonvalues.dumps(value)
        _strict(text)
        kinds[name] += 1
    assert len(hostile_value(generator, "huge string")) >= 100_000
    assert len(kinds) == 8


def test_groups_of_chaos_episodes_have_no_errors() -> None:
    from rolloutgym import rollout_group

    registry = get_registry()
    for task in range(3):
        group = rollout_group(
            task, lambda item: registry.make("toy/guess-v0", task=item), make_chaos("2"), num_rollouts=4, max_steps=6
        )
        assert not group.errors, [error.error_message for error in group.errors]
        _strict(json.dumps(group.to_dict(), ensure_ascii=False, allow_nan=False))
        assert TrajectoryGroup.from_dict(json.loads(json.dumps(group.to_dict()))).num_members == 4
