"""The kit run on the built-in toy environments, and on a deliberately broken env."""

from __future__ import annotations

import pytest
from rolloutgym_testing import EnvConformanceTests, PolicyConformanceTests


class TestGuessConformance(EnvConformanceTests):
    env_id = "toy/guess-v0"


class TestArithConformance(EnvConformanceTests):
    env_id = "toy/arith-v0"


class TestRandomPolicyConformance(PolicyConformanceTests):
    def make_policy(self):
        from rolloutgym import make_policy

        return make_policy("random:0")


def test_kit_catches_an_oracle_that_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolloutgym.builtin import toy

    monkeypatch.setattr(toy.ArithmeticEnv, "oracle_action", lambda self: "-1")
    with pytest.raises(AssertionError, match="oracle did not reach 1.0"):
        TestArithConformance().test_oracle_scores_max()


def test_kit_catches_a_null_policy_that_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolloutgym.builtin import toy

    monkeypatch.setattr(toy.ArithmeticEnv, "null_action", lambda self: str(self.task.answer))
    with pytest.raises(AssertionError, match="null policy scored above"):
        TestArithConformance().test_null_scores_min()
