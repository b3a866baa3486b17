"""``rolloutgym train ...`` end to end: the command the plugin adds through ``rolloutgym_commands``."""

from __future__ import annotations

import json

import pytest
import rolloutgym as rg
from rolloutgym.cli import main


@pytest.mark.slow
def test_train_grpo_prints_the_curve_and_the_comparison(tmp_path, capsys) -> None:
    out = tmp_path / "model"
    code = main(
        [
            "train",
            "grpo",
            "trl/digits-v0",
            "--model",
            "hf:tiny",
            "--out",
            str(out),
            "--steps",
            "3",
            "--max-tokens",
            "8",
            "--lr",
            "1e-2",
            "--eval-rollouts",
            "1",
            "--eval-limit",
            "2",
            "--threads",
            "1",
            "--trainer-arg",
            "lr_scheduler_type=constant",
            "--select-tasks",
            "2",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    steps = [line for line in printed.splitlines() if line.startswith("step")]
    assert [line.split()[1] for line in steps] == ["1/3", "2/3", "3/3"]
    # where the loss says nothing, each step says what the groups gave to learn from
    assert all(" signal " in line and "of groups" in line and "|adv|" in line for line in steps), steps
    assert "task selection: kept " in printed and " of 24 tasks" in printed
    # the summary: training reward with its error, not a bare 'first -> last'; the test change with its error
    assert "training reward (the tasks sampled, not a test): steps 1-1 " in printed
    assert "reward curve:" not in printed
    assert "before  hf:tiny" in printed and f"after   hf:{out}" in printed
    assert "  change  pass rate " in printed and "standard errors (paired by task, 2 tasks)" in printed
    assert f"--policy hf:{out}" in printed
    log = out / "training_log.jsonl"
    assert json.loads(log.read_text().splitlines()[0])["trainer"] == "grpo"
    # the output is usable as a policy
    assert (
        rg.run(
            "trl/digits-v0", policy=f"hf:{out}", limit=1, out=None, policy_options={"max_tokens": 4}
        ).summary.num_trajectories
        == 1
    )


def test_train_sft_with_a_missing_model_path_is_a_usage_error(tmp_path, capsys) -> None:
    run = tmp_path / "oracle.jsonl"
    rg.run("trl/digits-v0", policy="oracle", limit=2, out=run)
    code = main(["train", "sft", str(run), "--model", "hf:./does-not-exist", "--no-eval"])
    assert code == 2
    assert "no such file or folder './does-not-exist'" in capsys.readouterr().err


def test_train_grpo_on_a_text_env_with_environment_factory_points_to_rollout_func(capsys) -> None:
    code = main(["train", "grpo", "toy/arith-v0", "--mode", "environment_factory", "--no-eval", "--steps", "1"])
    assert code == 2
    error = capsys.readouterr().err
    assert "no tool space" in error and "--mode rollout_func" in error


def test_train_report_draws_the_curves_of_a_log(tmp_path, capsys) -> None:
    log = tmp_path / "training_log.jsonl"
    lines = [{"rolloutgym_training_log": 1, "trainer": "grpo", "env_ids": ["trl/digits-v0"]}]
    lines += [
        {"step": step, "reward": step / 10, "reward_std": 0.1, "loss": 0.0, "seconds": 0.2} for step in range(1, 6)
    ]
    lines += [
        {
            "event": "evaluation",
            "before/policy": "hf:tiny",
            "before/pass_rate": 0.0,
            "before/mean_reward": 0.1,
            "after/policy": "hf:out",
            "after/pass_rate": 1.0,
            "after/mean_reward": 1.0,
        }
    ]
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["train", "report", str(log), "-o", str(tmp_path / "curves.html")]) == 0
    page = (tmp_path / "curves.html").read_text()
    assert "mean reward" in page and "<svg" in page and "hf:out" in page and "100.0%" in page
    assert main(["train", "report", str(tmp_path / "missing.jsonl")]) == 2
    assert "no training log" in capsys.readouterr().err


def test_trainer_args_replace_defaults_and_unknown_or_refused_ones_are_one_line_errors(tmp_path, capsys) -> None:
    """--trainer-arg may set a field the command also sets (bf16, beta) and names a field TRL lacks."""
    from rolloutgym_protocol.errors import ConfigError
    from rolloutgym_trl._training import LOCAL_RUN_OPTIONS, make_config
    from trl import SFTConfig

    base = {"output_dir": str(tmp_path), "bf16": False, "use_cpu": True, **LOCAL_RUN_OPTIONS}
    config = make_config(SFTConfig, base, {"learning_rate": 3e-4, "use_cpu": True})
    assert config.learning_rate == 3e-4 and config.bf16 is False
    with pytest.raises(ConfigError, match="has no field 'nosuchfield'"):
        make_config(SFTConfig, base, {"nosuchfield": 1})
    with pytest.raises(ConfigError, match="SFTConfig refused the training options"):
        make_config(SFTConfig, base, {"lr_scheduler_type": "no-such-schedule"})
    run = tmp_path / "run.jsonl"
    rg.run("trl/digits-v0", policy="oracle", limit=2, out=run)
    code = main(
        [
            "train",
            "sft",
            str(run),
            "--model",
            "hf:tiny",
            "--steps",
            "1",
            "--no-eval",
            "--out",
            str(tmp_path / "m"),
            "--trainer-arg",
            "nosuchfield=1",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "has no field 'nosuchfield'" in err and "Traceback" not in err
