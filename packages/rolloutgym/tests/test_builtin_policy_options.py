"""The built-in policies refuse options they do not take, as the model adapters do (no silent no-op)."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym.builtin.policies import ChaosPolicy, RandomPolicy
from rolloutgym_protocol.errors import ConfigError


@pytest.mark.parametrize("name", ["oracle", "null", "human"])
def test_a_policy_without_options_names_the_one_it_was_given(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        rg.make_policy(name, temperature=0)
    message = str(caught.value)
    assert f"{name} policy: unknown option(s) temperature; it takes none" in message
    assert "hf:" in message  # where sampling options belong


def test_replay_refuses_options_before_reading_the_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="replay policy: unknown option.s. top_p"):
        rg.make_policy(f"replay:{tmp_path / 'missing.jsonl'}", top_p=0.9)


def test_random_and_chaos_take_their_own_options_and_no_others() -> None:
    assert isinstance(rg.make_policy("random", seed=3), RandomPolicy)
    assert isinstance(rg.make_policy("random", seed="4"), RandomPolicy)  # --policy-arg values may come as text
    chaos = rg.make_policy("chaos", seed=2, final_after=1)
    assert isinstance(chaos, ChaosPolicy) and chaos.seed == 2 and chaos.final_after == 1
    with pytest.raises(ConfigError, match="random policy: unknown option.s. temperature; it takes seed"):
        rg.make_policy("random", temperature=1.0)
    with pytest.raises(ConfigError, match="chaos policy: unknown option.s. bogus; it takes seed, final_after"):
        rg.make_policy("chaos:1", bogus=1)


@pytest.mark.parametrize("reference, options", [("random", {"seed": "x"}), ("random:x", {}), ("chaos:1.5", {})])
def test_a_seed_that_is_not_an_integer_is_a_config_error(reference: str, options: dict) -> None:
    with pytest.raises(ConfigError, match="must be an integer seed, e.g. --policy (random|chaos):7"):
        rg.make_policy(reference, **options)


def test_the_run_refuses_a_stray_policy_option_before_any_rollout(tmp_path) -> None:
    out = tmp_path / "run.jsonl"
    with pytest.raises(ConfigError, match="oracle policy: unknown option"):
        rg.run("toy/arith-v0", policy="oracle", policy_options={"temperature": 0}, limit=1, out=out)
    assert not out.exists()
