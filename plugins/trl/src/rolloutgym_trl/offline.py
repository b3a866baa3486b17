"""Fine-tuning from run files with TRL: ``rolloutgym train sft RUN...`` and ``train dpo RUN...``.

The rollout SDK's "improve" step, locally: collect rollouts (``rolloutgym run ... --out
RUN``), then

* :func:`train_sft` fine-tunes on the passing trajectories (score >= the run's pass
  threshold, or ``min_score``) with TRL's ``SFTTrainer``; the loss covers the assistant's
  tokens only, never the env's;
* :func:`train_dpo` pairs, per task, the best and the worst trajectory whose rewards differ
  (run with ``-n 2`` or more and a sampling temperature) and trains with ``DPOTrainer``.

Their rows (:mod:`rolloutgym_trl.offline_rows`) render each conversation as the ``hf`` policy
renders it, with the env's tools once per row (``tool_schemas`` shortens them).
The model is saved (``--policy hf:OUT`` loads it) and evaluated before and after on the
env's test split.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._logging import TrainingLogWriter, library_warnings_quiet, quiet_progress_bars
from ._memory import release_callback
from ._models import load_trainable
from ._training import (
    LOCAL_RUN_OPTIONS,
    TrainResult,
    _compare,
    _device_options,
    _lora_config,
    _train_and_save,
    make_config,
)
from .evaluate import evaluate_policy
from .offline_rows import dpo_rows, read_runs, run_env, sft_rows

__all__ = ["train_dpo", "train_sft"]


def _evaluation_env(runs: Sequence[Any]) -> str:
    return run_env(runs[0])  # the env the run was made on (an env file, a URL), not only its id


def _finish(
    trainer: Any,
    trainable: Any,
    log: TrainingLogWriter,
    out_dir: Path,
    before: Any,
    env_id: str,
    evaluation: Mapping[str, Any],
    started: float,
    extra: dict[str, Any],
) -> TrainResult:
    _train_and_save(trainer, trainable, out_dir)
    comparison = (
        None if before is None else _compare(before, evaluate_policy(env_id, f"hf:{out_dir}", **evaluation), log)
    )
    return TrainResult(out_dir, log.path, log.records, comparison, time.perf_counter() - started, extra)


def _evaluation_options(
    split: str | None, num_rollouts: int, limit: int | None, policy_options: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``evaluate_policy``'s keywords for the before/after evaluations."""
    return {"split": split, "num_rollouts": num_rollouts, "limit": limit, "policy_options": dict(policy_options or {})}


def _training_log(
    trainer: str,
    log_path: str | Path | None,
    out_dir: Path,
    model: str,
    runs: Sequence[str | Path],
    env_id: str,
    counts: dict[str, int],
    on_log: Callable[[dict[str, Any]], None] | None,
) -> TrainingLogWriter:
    """The JSONL training log (default ``OUT/training_log.jsonl``) with the offline run's header."""
    header = {"trainer": trainer, "model": model, "runs": [str(path) for path in runs], "env_ids": [env_id], **counts}
    return TrainingLogWriter(log_path or out_dir / "training_log.jsonl", header, on_write=on_log)


def _common_arguments(
    out_dir: Path, *, epochs: float, steps: int | None, learning_rate: float, batch_size: int, seed: int
) -> dict[str, Any]:
    if batch_size < 1:
        raise ConfigError(f"--batch-size must be at least 1, got {batch_size}")
    options: dict[str, Any] = {
        "output_dir": str(out_dir),
        "num_train_epochs": epochs,
        "learning_rate": learning_rate,
        "per_device_train_batch_size": batch_size,
        "seed": seed,
        "data_seed": seed,
        **LOCAL_RUN_OPTIONS,
        **_device_options(),
    }
    if steps is not None:
        options["max_steps"] = steps
    return options


def _setup(model: str, threads: int | None) -> Any:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    quiet_progress_bars()
    import torch

    if threads is not None:
        if int(threads) < 1:
            raise ConfigError(f"--threads must be at least 1, got {threads}")
        torch.set_num_threads(int(threads))
    return load_trainable(model)


def _before(env_id: str, trainable: Any, evaluate: bool, evaluation: Mapping[str, Any]) -> Any:
    if not evaluate:
        return None
    import torch
    from rolloutgym_transformers import forget_model

    threads = torch.get_num_threads()
    name = trainable.reference.removeprefix("hf:")
    result = evaluate_policy(env_id, f"hf:{name}", **evaluation)
    forget_model(name)  # training holds its own copy; the evaluation's is not needed again
    torch.set_num_threads(threads)
    return result


@dataclass(frozen=True)
class _Method:
    """What differs between ``train sft`` and ``train dpo``; :func:`_train_offline` does the rest."""

    name: str
    count: str  # what a row is, for the log header and TrainResult.extra: "examples" or "pairs"
    rows: Callable[[Sequence[Any], Any], list[dict[str, Any]]]  # (runs read, tokenizer) -> the dataset's rows
    config_class: Any
    config: Mapping[str, Any]  # the method's own config options, over the common ones
    trainer_class: Any
    trainer_arguments: Callable[[], dict[str, Any]] = dict  # more trainer keywords, made just before the trainer


def _train_offline(
    method: _Method,
    runs: Sequence[str | Path],
    model: str,
    *,
    out: str | Path,
    epochs: float,
    steps: int | None,
    learning_rate: float,
    batch_size: int,
    lora: bool | Mapping[str, Any],
    seed: int,
    log_path: str | Path | None,
    evaluate: bool,
    eval_split: str | None,
    eval_rollouts: int,
    eval_limit: int | None,
    policy_options: Mapping[str, Any] | None,
    threads: int | None,
    trainer_overrides: Mapping[str, Any] | None,
    on_log: Callable[[dict[str, Any]], None] | None,
) -> TrainResult:
    """Read the runs, load the model, build the rows, evaluate before, train, save and evaluate after."""
    from datasets import Dataset

    started = time.perf_counter()
    loaded = read_runs(runs)
    env_id = _evaluation_env(loaded)
    trainable = _setup(model, threads)
    rows = method.rows(loaded, trainable.tokenizer)
    out_dir = Path(out)
    evaluation = _evaluation_options(eval_split, eval_rollouts, eval_limit, policy_options)
    before = _before(env_id, trainable, evaluate, evaluation)
    common = _common_arguments(
        out_dir, epochs=epochs, steps=steps, learning_rate=learning_rate, batch_size=batch_size, seed=seed
    )
    arguments = make_config(method.config_class, {**common, **method.config}, trainer_overrides)
    log = _training_log(method.name, log_path, out_dir, model, runs, env_id, {method.count: len(rows)}, on_log)
    trainer = method.trainer_class(
        model=trainable.model,
        args=arguments,
        train_dataset=Dataset.from_list(rows),
        processing_class=trainable.tokenizer,
        peft_config=_lora_config(lora),
        callbacks=[log.callback(), release_callback()],
        **method.trainer_arguments(),
    )
    return _finish(trainer, trainable, log, out_dir, before, env_id, evaluation, started, {method.count: len(rows)})


@library_warnings_quiet()
def train_sft(
    runs: Sequence[str | Path],
    model: str = "hf:tiny",
    *,
    out: str | Path = "trained/sft",
    epochs: float = 3.0,
    steps: int | None = None,
    learning_rate: float = 2e-5,
    batch_size: int = 4,
    min_score: float | None = None,
    lora: bool | Mapping[str, Any] = False,
    seed: int = 0,
    log_path: str | Path | None = None,
    evaluate: bool = True,
    eval_split: str | None = "test",
    eval_rollouts: int = 1,
    eval_limit: int | None = None,
    policy_options: Mapping[str, Any] | None = None,
    threads: int | None = None,
    trainer_overrides: Mapping[str, Any] | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    tool_schemas: str = "full",
) -> TrainResult:
    """Fine-tune ``model`` on the passing trajectories of ``runs`` with TRL's ``SFTTrainer``.

    ``policy_options`` are the ``hf`` policy options of the before/after evaluation
    (e.g. ``{"max_tokens": 64, "greedy": True}``). ``tool_schemas``: ``full``, ``short`` or
    ``names`` (how much of each tool schema the rows carry; :mod:`rolloutgym_trl.offline_rows`).
    """
    from trl import SFTConfig, SFTTrainer

    def rows(loaded: Sequence[Any], tokenizer: Any) -> list[dict[str, Any]]:
        return sft_rows(loaded, tokenizer, min_score=min_score, tool_schemas=tool_schemas)

    method = _Method("sft", "examples", rows, SFTConfig, {"completion_only_loss": True}, SFTTrainer)
    return _train_offline(
        method, runs, model, out=out, epochs=epochs, steps=steps, learning_rate=learning_rate,
        batch_size=batch_size, lora=lora, seed=seed, log_path=log_path, evaluate=evaluate, eval_split=eval_split,
        eval_rollouts=eval_rollouts, eval_limit=eval_limit, policy_options=policy_options, threads=threads,
        trainer_overrides=trainer_overrides, on_log=on_log,
    )  # fmt: skip


@library_warnings_quiet()
def train_dpo(
    runs: Sequence[str | Path],
    model: str = "hf:tiny",
    *,
    out: str | Path = "trained/dpo",
    epochs: float = 3.0,
    steps: int | None = None,
    learning_rate: float = 5e-6,
    batch_size: int = 4,
    beta: float = 0.1,
    margin: float = 0.0,
    lora: bool | Mapping[str, Any] = False,
    seed: int = 0,
    log_path: str | Path | None = None,
    evaluate: bool = True,
    eval_split: str | None = "test",
    eval_rollouts: int = 1,
    eval_limit: int | None = None,
    policy_options: Mapping[str, Any] | None = None,
    threads: int | None = None,
    trainer_overrides: Mapping[str, Any] | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    tool_schemas: str = "full",
) -> TrainResult:
    """Train ``model`` with TRL's ``DPOTrainer`` on best-vs-worst pairs of each task in ``runs``
    (``tool_schemas``: as in :func:`train_sft`)."""
    from trl import DPOConfig, DPOTrainer

    def rows(loaded: Sequence[Any], tokenizer: Any) -> list[dict[str, Any]]:
        return dpo_rows(loaded, tokenizer, margin=margin, tool_schemas=tool_schemas)

    def reference() -> dict[str, Any]:  # the frozen copy DPO compares against
        return {"ref_model": None if lora else load_trainable(model).model.eval()}

    method = _Method("dpo", "pairs", rows, DPOConfig, {"beta": beta}, DPOTrainer, reference)
    return _train_offline(
        method, runs, model, out=out, epochs=epochs, steps=steps, learning_rate=learning_rate,
        batch_size=batch_size, lora=lora, seed=seed, log_path=log_path, evaluate=evaluate, eval_split=eval_split,
        eval_rollouts=eval_rollouts, eval_limit=eval_limit, policy_options=policy_options, threads=threads,
        trainer_overrides=trainer_overrides, on_log=on_log,
    )  # fmt: skip
