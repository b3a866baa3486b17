"""``rg.run`` from Python: a real signature, Python advice (not CLI flags), policy objects."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym_protocol.errors import RunFileError


def test_help_shows_every_option() -> None:
    parameters = inspect.signature(rg.run).parameters
    for name in ("config", "policy", "num_rollouts", "limit", "seed", "out", "resume", "env_kwargs", "registry"):
        assert name in parameters
    assert parameters["num_rollouts"].default == 1 and parameters["resume"].default is False


def test_an_existing_out_file_says_resume_true(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    rg.run("toy/arith-v0", policy="oracle", limit=1, out=str(out))
    with pytest.raises(RunFileError, match=r"resume=True"):
        rg.run("toy/arith-v0", policy="oracle", limit=1, out=str(out))
    assert rg.run("toy/arith-v0", policy="oracle", limit=1, out=str(out), resume=True).summary.pass_rate == 1.0


def test_a_policy_object_can_be_passed_as_policy(tmp_path: Path) -> None:
    null = rg.make_policy("null")
    result = rg.run("toy/arith-v0", policy=null, limit=2, out=str(tmp_path / "null.jsonl"))
    assert result.summary.pass_rate == 0.0


def test_limit_zero_is_refused_as_the_cli_refuses_it(tmp_path):
    """One rule for rg.run and `rolloutgym run --limit`: at least 1 (a run of no task is a mistake)."""
    from rolloutgym_protocol.errors import ConfigError

    with pytest.raises(ConfigError, match="--limit must be at least 1"):
        rg.run("toy/arith-v0", policy="oracle", limit=0, out=str(tmp_path / "none.jsonl"))
    assert not (tmp_path / "none.jsonl").exists()
