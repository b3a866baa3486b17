"""``rolloutgym train sft|dpo|grpo``: the commands this plugin adds through ``rolloutgym_commands``.

Only typer is imported here; trl, torch and transformers load when a command runs.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import typer

__all__ = ["register"]

train_app = typer.Typer(
    name="train",
    help="Train a local model on an environment with TRL (GRPO online; SFT/DPO from run files).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


_REPORT_TO_HELP = (
    "Send the trainer's and the env's metrics to trackers: tensorboard, mlflow, wandb (comma-separated; "
    "configured by their usual environment variables, e.g. MLFLOW_TRACKING_URI, WANDB_MODE=offline)."
)


def register(cli: Any) -> None:
    """Add the ``train`` group to the ``rolloutgym`` typer app."""
    cli.add_typer(train_app, name="train")


def _key_values(pairs: list[str] | None, option: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in pairs or []:
        key, separator, raw = pair.partition("=")
        if not separator or not key:
            raise typer.BadParameter(f"{option} expects KEY=VALUE, got {pair!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _format(value: Any, spec: str) -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def _signal_pieces(record: dict[str, Any]) -> list[str]:
    """What the GRPO groups gave to learn from (printed where the loss says nothing)."""
    pieces = []
    spread = record.get("rolloutgym/groups_with_spread")
    if isinstance(spread, (int, float)):
        pieces.append(f"signal {spread:4.0%} of groups")
        resampled, dropped = record.get("rolloutgym/resampled_groups"), record.get("rolloutgym/dropped_groups")
        if isinstance(resampled, (int, float)) and resampled:
            pieces.append(f"resampled {resampled:.0f}")
        if isinstance(dropped, (int, float)) and dropped:
            pieces.append(f"dropped {dropped:.0f}")
    elif isinstance(record.get("frac_reward_zero_std"), (int, float)):
        pieces.append(f"signal {1 - record['frac_reward_zero_std']:4.0%} of groups")
    if isinstance(record.get("rolloutgym/advantage_abs"), (int, float)):
        pieces.append(f"|adv| {record['rolloutgym/advantage_abs']:.2f}")
    return pieces


def _print_step(total: int | None) -> Any:
    def show(record: dict[str, Any]) -> None:
        if "reward" in record or "loss" in record:
            if record.get("event") == "end":
                return
            step = int(record.get("step") or 0)
            pieces = [f"step {step:>4}" + (f"/{total}" if total else "")]
            if "reward" in record:
                reward = f"reward {_format(record.get('reward'), '.3f')}"
                if isinstance(record.get("reward_std"), (int, float)):
                    reward += f" (std {record['reward_std']:.2f})"
                pieces.append(reward)
            if "rolloutgym/pass_rate" in record:
                pieces.append(f"pass {_format(record.get('rolloutgym/pass_rate'), '6.1%')}")
            pieces.extend(_signal_pieces(record))
            pieces.append(f"loss {_format(record.get('loss'), '.4f')}")
            if "kl" in record:
                pieces.append(f"kl {_format(record.get('kl'), '.4f')}")
            pieces.append(f"{_format(record.get('seconds'), '.2f')} s")
            typer.echo("  ".join(pieces))
        elif record.get("event") == "task_selection":
            typer.echo(
                f"task selection: kept {record.get('kept')} of {record.get('tasks')} tasks (never solved "
                f"{record.get('never_solved')}, always solved {record.get('always_solved')}; starting pass rate "
                f"{_format(record.get('pass_rate'), '.1%')} over {record.get('episodes')} episodes, "
                f"{_format(record.get('selection_seconds'), '.1f')} s)"
            )

    return show


def _curve_line(result: Any) -> str | None:
    """The training-set reward, first tenth of the steps vs last tenth, each with its standard error over steps."""
    from .stats import mean_and_error

    curve = result.curve("reward")
    if not curve:
        return None
    width = max(1, len(curve) // 10)
    (first, first_error), (last, last_error) = mean_and_error(curve[:width]), mean_and_error(curve[-width:])
    spread = [float(value) for value in result.curve("rolloutgym/groups_with_spread")]
    signal = f"; groups with reward spread: {sum(spread) / len(spread):.0%} of steps' groups" if spread else ""
    return (
        f"training reward (the tasks sampled, not a test): steps 1-{width} {first:.3f} ± {first_error:.3f}, "
        f"steps {len(curve) - width + 1}-{len(curve)} {last:.3f} ± {last_error:.3f}{signal}"
    )


def _report(result: Any) -> None:
    line = _curve_line(result)
    if line:
        typer.echo(line)
    if result.comparison is not None:
        for line in result.comparison.lines():
            typer.echo(line)
    typer.echo(f"model: {result.output_dir}  (evaluate it with --policy hf:{result.output_dir})")
    typer.echo(f"training log: {result.log_path}  (plot it: rolloutgym report {result.log_path})")
    typer.echo(f"time: {result.seconds:.1f} s")


@train_app.command("grpo")
def grpo(
    envs: list[str] = typer.Argument(..., help="Environment id(s) or env file(s) to train on (several: a mixture)."),
    model: str = typer.Option("hf:tiny", "--model", "-m", help="hf:tiny, hf:smollm2, hf:PATH or PATH."),
    out: Path = typer.Option(Path("trained/grpo"), "--out", "-o", help="Where the trained model is saved."),
    steps: int = typer.Option(40, "--steps", help="Optimizer steps."),
    num_generations: int = typer.Option(8, "--num-generations", "-g", help="Episodes per task per step (GRPO group)."),
    prompts_per_step: int = typer.Option(2, "--prompts-per-step", help="Tasks per step."),
    max_tokens: int = typer.Option(64, "--max-tokens", help="Tokens sampled per assistant turn."),
    max_turns: int | None = typer.Option(None, "--max-turns", help="Assistant turns per episode."),
    learning_rate: float = typer.Option(1e-5, "--learning-rate", "--lr", help="Learning rate."),
    beta: float = typer.Option(0.0, "--beta", help="KL coefficient (0: no reference model)."),
    temperature: float = typer.Option(1.0, "--temperature", help="Sampling temperature."),
    seed: int = typer.Option(0, "--seed", help="Seed for sampling, data order and initialisation."),
    split: str = typer.Option("train", "--split", help="Task split to train on ('all' for every task)."),
    mode: str = typer.Option(
        "rollout_func", "--mode", help="rollout_func (any env) or environment_factory (tool envs)."
    ),
    lora: bool = typer.Option(False, "--lora", help="Train a LoRA adapter (merged into the saved model)."),
    env_args: list[str] = typer.Option(None, "--env-arg", help="KEY=VALUE for the env factory (repeatable)."),
    trainer_args: list[str] = typer.Option(None, "--trainer-arg", help="KEY=VALUE GRPOConfig field (repeatable)."),
    log: Path | None = typer.Option(None, "--log", help="Training log (JSONL); default OUT/training_log.jsonl."),
    evaluate: bool = typer.Option(True, "--eval/--no-eval", help="Evaluate before and after on the test split."),
    eval_rollouts: int = typer.Option(4, "--eval-rollouts", help="Episodes per test task."),
    eval_limit: int | None = typer.Option(None, "--eval-limit", help="Evaluate on at most this many tasks."),
    threads: int | None = typer.Option(None, "--threads", help="torch CPU threads."),
    chat_template: str | None = typer.Option(
        None,
        "--chat-template",
        help="Replace the model's chat template: a TRL template name (qwen2_5, qwen3, ...) or a Jinja file.",
    ),
    dynamic_sampling: str = typer.Option(
        "resample",
        "--dynamic-sampling",
        help="Groups whose rewards are all equal (no gradient): resample (other tasks, then drop), drop or off.",
    ),
    select_tasks: int = typer.Option(
        0,
        "--select-tasks",
        help="Pre-pass: play each training task N times first and train on those solved sometimes (0: off).",
    ),
    micro_batch: int = typer.Option(
        0, "--micro-batch", help="Episodes per forward/backward pass, gradients summed (same step; 0: at most 4)."
    ),
    mask_attributed: str = typer.Option(
        "user,env,grader",
        "--mask-attributed",
        help="Leave out of training the episodes whose score is attributed to these parties "
        "(user, env, grader; 'none': train on all).",
    ),
    report_to: str = typer.Option("none", "--report-to", help=_REPORT_TO_HELP),
) -> None:
    """Online RL: GRPO (TRL's GRPOTrainer) on the env's tasks; prints the reward per step and
    before/after pass rates."""
    options = dict(locals())
    from .grpo import train_grpo

    _report(train_grpo(options.pop("envs"), options.pop("model"), **_grpo_arguments(options)))


def _grpo_arguments(options: dict[str, Any]) -> dict[str, Any]:
    """``train grpo``'s options as :func:`~rolloutgym_trl.train_grpo`'s keyword arguments."""
    split, env_args, trainer_args = options.pop("split"), options.pop("env_args"), options.pop("trainer_args")
    renamed = {
        "split": None if split == "all" else split,
        "env_kwargs": _key_values(env_args, "--env-arg"),
        "log_path": options.pop("log"),
        "trainer_overrides": _key_values(trainer_args, "--trainer-arg"),
        "on_log": _print_step(options["steps"]),
        "micro_batch": options.pop("micro_batch") or None,
    }
    return {**options, **renamed}


def _offline_parameters(
    kind: str, *, runs_help: str, unit: str, learning_rate: float, config: str, own: list[inspect.Parameter]
) -> list[inspect.Parameter]:
    """The arguments and options of ``train sft`` / ``train dpo``, in their ``--help`` order: the ones both
    commands share (``unit``: what an epoch passes over), with the trainer's ``own`` after --batch-size."""
    return [
        _parameter("runs", list[Path], typer.Argument(..., help=runs_help)),
        _parameter(
            "model", str, typer.Option("hf:tiny", "--model", "-m", help="hf:tiny, hf:smollm2, hf:PATH or PATH.")
        ),
        _parameter(
            "out", Path, typer.Option(Path(f"trained/{kind}"), "--out", "-o", help="Where the trained model is saved.")
        ),
        _parameter("epochs", float, typer.Option(3.0, "--epochs", help=f"Passes over the {unit}.")),
        _parameter("steps", int | None, typer.Option(None, "--steps", help="Optimizer steps (overrides --epochs).")),
        _parameter(
            "learning_rate", float, typer.Option(learning_rate, "--learning-rate", "--lr", help="Learning rate.")
        ),
        _parameter("batch_size", int, typer.Option(4, "--batch-size", help=f"{unit.capitalize()} per step.")),
        *own,
        _parameter(
            "lora", bool, typer.Option(False, "--lora", help="Train a LoRA adapter (merged into the saved model).")
        ),
        _parameter("seed", int, typer.Option(0, "--seed")),
        _parameter(
            "policy_args",
            list[str],
            typer.Option(None, "--policy-arg", help="KEY=VALUE hf policy option for the evaluations."),
        ),
        _parameter(
            "trainer_args",
            list[str],
            typer.Option(None, "--trainer-arg", help=f"KEY=VALUE {config} field (repeatable)."),
        ),
        _parameter(
            "log",
            Path | None,
            typer.Option(None, "--log", help="Training log (JSONL); default OUT/training_log.jsonl."),
        ),
        _parameter(
            "evaluate",
            bool,
            typer.Option(True, "--eval/--no-eval", help="Evaluate before and after on the test split."),
        ),
        _parameter("eval_rollouts", int, typer.Option(1, "--eval-rollouts", help="Episodes per test task.")),
        _parameter(
            "eval_limit", int | None, typer.Option(None, "--eval-limit", help="Evaluate on at most this many tasks.")
        ),
        _parameter("threads", int | None, typer.Option(None, "--threads", help="torch CPU threads.")),
        _parameter("report_to", str, typer.Option("none", "--report-to", help=_REPORT_TO_HELP)),
        _parameter(
            "tool_schemas",
            str,
            typer.Option(
                "full",
                "--tool-schemas",
                help="Tool schemas in each row (once per row): full, short (no parameter descriptions) or names.",
            ),
        ),
    ]


def _parameter(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _offline_command(kind: str, help_text: str, **parameters: Any) -> None:
    """Add ``train KIND`` (sft or dpo): ``rolloutgym_trl.offline.train_KIND`` on run files, with the options of
    :func:`_offline_parameters` (typer reads them from the command's signature)."""

    def command(**options: Any) -> None:
        from . import offline

        train = getattr(offline, f"train_{kind}")
        from .tracking import report_to_options

        runs, model, steps = options.pop("runs"), options.pop("model"), options["steps"]
        tracking = report_to_options(options.pop("report_to"), options["out"])
        result = train(
            runs,
            model,
            log_path=options.pop("log"),
            policy_options=_key_values(options.pop("policy_args"), "--policy-arg"),
            trainer_overrides={**tracking, **_key_values(options.pop("trainer_args"), "--trainer-arg")},
            on_log=_print_step(steps),
            **options,
        )
        _report(result)

    command.__name__ = command.__qualname__ = kind
    command.__doc__ = help_text
    command.__signature__ = inspect.Signature(_offline_parameters(kind, **parameters))  # type: ignore[attr-defined]
    train_app.command(kind)(command)


_offline_command(
    "sft",
    "Supervised fine-tuning (TRL's SFTTrainer) on the passing trajectories of run files.",
    runs_help="Run files (rolloutgym run ... --out RUN.jsonl).",
    unit="examples",
    learning_rate=2e-5,
    config="SFTConfig",
    own=[
        _parameter(
            "min_score",
            float | None,
            typer.Option(None, "--min-score", help="Score a trajectory needs (default: the run's pass threshold)."),
        )
    ],
)
_offline_command(
    "dpo",
    "Preference optimisation (TRL's DPOTrainer) on best-vs-worst episodes of each task in run files.",
    runs_help="Run files with several episodes per task (-n 2 or more).",
    unit="pairs",
    learning_rate=5e-6,
    config="DPOConfig",
    own=[
        _parameter("beta", float, typer.Option(0.1, "--beta", help="DPO beta.")),
        _parameter("margin", float, typer.Option(0.0, "--margin", help="Reward gap a pair needs.")),
    ],
)


@train_app.command("report")
def report(
    logs: list[Path] = typer.Argument(..., help="Training logs (OUT/training_log.jsonl); several share the plots."),
    out: Path | None = typer.Option(None, "--out", "-o", help="The HTML file (default: the first log with .html)."),
    title: str | None = typer.Option(None, "--title", help="The page title."),
) -> None:
    """Plot training logs as curves (reward, pass rate, loss, KL, time per step) in a self-contained HTML page."""
    from .curves import build_curves_report

    path = build_curves_report(logs, out, title=title)
    typer.echo(f"wrote {path}; open it in a browser: {path.resolve().as_uri()}")
