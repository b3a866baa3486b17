"""Every registered env passes Gymnasium's own checker through ``gymnasium.make`` (cross-package).

``rolloutgym.register_gymnasium()`` registers each env id with Gymnasium; a single-turn env
must not get a TimeLimit of one step (that marks its terminating step truncated, which
``check_env`` rejects).
"""

from __future__ import annotations

import warnings

import gymnasium
import pytest
import rolloutgym as rg
from gymnasium.utils.env_checker import check_env

IDS = rg.register_gymnasium()
# ScienceWorld's 30 task types are one env class over one Java simulator (a JVM per worker,
# seconds per reset under load: minutes of CI for all 30); Gymnasium's checker sees the same
# code in each, so every tenth type is checked here (plugins/benchmarks' own tests check the
# catalogue of all 30 against the package, and episodes of sampled types).
CHECKED_IDS = [env_id for env_id in IDS if not env_id.startswith("scienceworld/")] + sorted(
    env_id for env_id in IDS if env_id.startswith("scienceworld/")
)[::10]


def test_every_shipped_env_is_registered() -> None:
    assert {"toy/arith-v0", "toy/guess-v0", "workflow/refund-v1", "sql/shop-v0"} <= set(IDS)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", CHECKED_IDS)
def test_gymnasium_check_env_passes(env_id: str) -> None:
    with warnings.catch_warnings():
        # check_env suggests checking the unwrapped env (we check what gymnasium.make returns);
        # gymnasium.make says a -v0 is out of date when a -v1 exists (refund-v0 is kept on purpose).
        warnings.filterwarnings("ignore", message=".*is different from the unwrapped version.*")
        warnings.filterwarnings("ignore", message=".*is out of date.*")
        env = gymnasium.make(env_id)
        try:
            check_env(env, skip_render_check=True)
        finally:
            env.close()


def test_single_turn_envs_have_no_one_step_time_limit() -> None:
    env = gymnasium.make("toy/arith-v0")
    try:
        env.reset(seed=0)
        _, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
        assert terminated and not truncated
    finally:
        env.close()
