"""Online RL on registered envs with TRL's ``GRPOTrainer``: ``rolloutgym train grpo ENV --model M``.

:func:`train_grpo` builds the dataset (:func:`~rolloutgym_trl.train_dataset`), the
``GRPOTrainer`` (with :class:`~rolloutgym_trl.RolloutFunction` and
:func:`~rolloutgym_trl.env_reward`, or with ``environment_factory`` for tool envs), trains,
writes the training log (JSONL, one line per step), saves the model (usable as
``--policy hf:OUT``) and evaluates it before and after on the env's test split.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._attribution import checked_parties
from ._logging import TrainingLogWriter, library_warnings_quiet, quiet_progress_bars
from ._memory import micro_batch_size, release_callback
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
from .evaluate import PolicyEvaluation, evaluate_policy
from .tracking import report_to_options

__all__ = ["grpo_config", "train_grpo"]


def grpo_config(
    out: str | Path,
    *,
    steps: int,
    num_generations: int,
    prompts_per_step: int,
    max_tokens: int,
    learning_rate: float,
    beta: float,
    temperature: float,
    seed: int,
    overrides: Mapping[str, Any] | None = None,
    micro_batch: int | None = None,
) -> Any:
    """A ``GRPOConfig`` for a short local run (CPU when there is no GPU, no checkpoints, log every step).

    A step generates ``num_generations * prompts_per_step`` episodes together and scores them in
    micro-batches of ``micro_batch`` (default: at most 4; :func:`rolloutgym_trl._memory.micro_batch_size`),
    accumulating their gradients into the step's one optimizer update.
    """
    from trl import GRPOConfig

    if steps < 1:
        raise ConfigError(f"--steps must be at least 1, got {steps}")
    if num_generations < 2:
        raise ConfigError(
            f"--num-generations must be at least 2 (GRPO compares episodes of a group), got {num_generations}"
        )
    if prompts_per_step < 1:
        raise ConfigError(f"--prompts-per-step must be at least 1, got {prompts_per_step}")
    batch = num_generations * prompts_per_step
    micro = micro_batch_size(batch, micro_batch)
    options: dict[str, Any] = {
        "output_dir": str(out),
        "max_steps": steps,
        "per_device_train_batch_size": micro,
        "gradient_accumulation_steps": batch // micro,  # TRL: steps_per_generation = this, one generation batch
        "num_generations": num_generations,
        "max_completion_length": max_tokens,
        "learning_rate": learning_rate,
        "beta": beta,
        "temperature": temperature,
        "seed": seed,
        "data_seed": seed,
        "dataloader_num_workers": 0,
        **LOCAL_RUN_OPTIONS,
        **_device_options(),
    }
    return make_config(GRPOConfig, options, overrides)


def resolve_chat_template(name_or_path: str) -> str:
    """A chat template by TRL name (``qwen2_5``, ``qwen3``, ``llama3_2``...) or from a Jinja file."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    import trl.chat_template_utils as templates

    template = getattr(templates, f"{name_or_path}_chat_template", None)
    if not isinstance(template, str):
        names = sorted(name[: -len("_chat_template")] for name in dir(templates) if name.endswith("_chat_template"))
        raise ConfigError(
            f"--chat-template {name_or_path!r}: no such file, and not one of TRL's templates: {', '.join(names)}"
        )
    return template


def check_tool_template(tokenizer: Any) -> None:
    """TRL's tool loop parses replies only for chat templates it knows; say so before training starts."""
    from trl.chat_template_utils import add_response_schema

    try:
        add_response_schema(tokenizer)
    except ValueError:
        raise ConfigError(
            "mode environment_factory runs TRL's own tool-calling loop, which parses tool calls only for chat "
            "templates TRL knows (Qwen 2.5/3, Llama 3.x, GLM-4, gpt-oss, ...); this model's template is not one. "
            "Pass --chat-template qwen2_5 (or another TRL template), or use --mode rollout_func, whose parser "
            "handles any template"
        ) from None


@library_warnings_quiet()
def train_grpo(
    env_ids: str | Sequence[str],
    model: str = "hf:tiny",
    *,
    out: str | Path = "trained/grpo",
    steps: int = 40,
    num_generations: int = 8,
    prompts_per_step: int = 2,
    max_tokens: int = 64,
    max_turns: int | None = None,
    learning_rate: float = 1e-5,
    beta: float = 0.0,
    temperature: float = 1.0,
    seed: int = 0,
    split: str | None = "train",
    mode: str = "rollout_func",
    lora: bool | Mapping[str, Any] = False,
    env_kwargs: Mapping[str, Any] | None = None,
    log_path: str | Path | None = None,
    evaluate: bool = True,
    eval_split: str | None = "test",
    eval_rollouts: int = 4,
    eval_limit: int | None = None,
    threads: int | None = None,
    trainer_overrides: Mapping[str, Any] | None = None,
    chat_template: str | None = None,
    on_log: Any = None,
    dynamic_sampling: str = "resample",
    select_tasks: int = 0,
    batched: bool = True,
    micro_batch: int | None = None,
    callbacks: Sequence[Any] = (),
    mask_attributed: str | Sequence[str] = ("user", "env", "grader"),
    report_to: str | Sequence[str] | None = None,
) -> TrainResult:
    """Train ``model`` with GRPO on the tasks of ``env_ids`` and return the curves and comparison.

    Args:
        env_ids: one registered env id, or several (a mixture; ``mode="rollout_func"`` only).
        model: ``hf:tiny``, ``hf:smollm2``, ``hf:PATH`` or ``PATH``.
        out: where the trained model is saved (``--policy hf:OUT`` loads it).
        steps: optimizer steps.
        num_generations: episodes per task per step (the GRPO group).
        prompts_per_step: tasks per step.
        max_tokens: tokens sampled per assistant turn.
        max_turns: assistant turns per episode (default: the env's step budget).
        learning_rate / beta / temperature / seed: as in ``GRPOConfig``.
        split: the task split trained on (``None``: every task).
        mode: ``rollout_func`` (any env, rolloutgym's token loop) or ``environment_factory``
            (tool envs; TRL's own tool-calling loop).
        lora: train a LoRA adapter (``True`` or ``LoraConfig`` options); it is merged on save.
        env_kwargs: keyword arguments for the env factories.
        log_path: the JSONL training log (default ``OUT/training_log.jsonl``).
        evaluate: run the model before and after training on ``eval_split``, ``eval_rollouts``
            episodes per task, on at most ``eval_limit`` tasks.
        threads: torch CPU threads.
        trainer_overrides: extra ``GRPOConfig`` fields.
        chat_template: replace the tokenizer's chat template: the name of one TRL ships
            (``qwen2_5``, ``qwen3``, ``llama3_2``...; TRL's tool loop parses only those) or a
            Jinja file. Saved with the model.
        on_log: called with each log record as training runs (for progress output).
        dynamic_sampling / batched: :class:`~rolloutgym_trl.RolloutFunction`'s options.
        select_tasks: play each training task this many times first; train on those with mixed
            rewards (:mod:`rolloutgym_trl.selection`; figures in ``extra["task_selection"]``).
        micro_batch: episodes per forward/backward pass (default: at most 4); the step's
            gradient is accumulated over the micro-batches, so it is the same, with less memory.
        callbacks: extra ``transformers.TrainerCallback`` objects for the trainer.
        mask_attributed: parties whose episodes are left out of training (``rollout_func`` mode;
            :class:`~rolloutgym_trl.RolloutFunction`); ``()`` or ``"none"``: none.
        report_to: trackers for the trainer's and the env's metrics (``"tensorboard"``,
            ``"mlflow"``, ``"wandb"``, comma-separated; :mod:`rolloutgym_trl.tracking`).
    """
    return _run_grpo(SimpleNamespace(**locals()))


def _run_grpo(o: SimpleNamespace) -> TrainResult:
    """:func:`train_grpo` with its arguments as attributes of ``o``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    quiet_progress_bars()
    ids = _checked_env_ids(o.env_ids, o.mode)
    import torch
    import trl  # noqa: F401 - as before: without TRL, fail before the model loads

    training_threads = _set_threads(torch, o.threads)
    started, out_dir = time.perf_counter(), Path(o.out)
    trainable = load_trainable(o.model)
    sampling = _sampling_options(trainable, o.max_tokens, o.temperature, o.seed, o.max_turns, o.chat_template)
    dataset, factory = _dataset_and_factory(ids, o.mode, o.split, o.env_kwargs, trainable.tokenizer)
    evaluation = _evaluator(ids[0], sampling, o.env_kwargs, o.eval_split, o.eval_rollouts, o.eval_limit)
    before = _evaluate_base(evaluation, trainable, torch, training_threads) if o.evaluate else None
    dataset, selection = _selected(dataset, factory, trainable, o.select_tasks, o.prompts_per_step, sampling)
    schedule = _schedule(o.steps, o.num_generations, o.prompts_per_step, o.learning_rate, o.seed)
    arguments = grpo_config(
        out_dir,
        **schedule,
        max_tokens=o.max_tokens,
        beta=o.beta,
        temperature=o.temperature,
        overrides={**report_to_options(o.report_to, out_dir), **(o.trainer_overrides or {})},
        micro_batch=o.micro_batch,
    )
    header = {"trainer": "grpo", "mode": o.mode, "model": o.model, "env_ids": ids, "split": o.split, **schedule}
    log = TrainingLogWriter(o.log_path or out_dir / "training_log.jsonl", header, on_write=o.on_log)
    rollout = dict(
        max_tokens=o.max_tokens,
        max_turns=o.max_turns,
        env_kwargs=o.env_kwargs,
        seed=o.seed,
        batched=o.batched,
        mask_attributed=checked_parties(o.mask_attributed),
    )
    callbacks = [log.callback(), release_callback(), *o.callbacks]
    trainer = _grpo_trainer(
        trainable, arguments, dataset, factory, callbacks, o.lora, rollout | {"dynamic_sampling": o.dynamic_sampling}
    )
    extra = _start_from_selection(selection, trainer, log)
    _train_and_save(trainer, trainable, out_dir)
    comparison = None if before is None else _compare(before, evaluation(f"hf:{out_dir}"), log)
    return TrainResult(out_dir, log.path, log.records, comparison, time.perf_counter() - started, extra)


def _selected(
    dataset: Any, factory: Any, trainable: Any, samples: int, prompts_per_step: int, sampling: Mapping[str, Any]
) -> tuple[Any, Any]:
    """The difficulty pre-pass (``select_tasks``; ``rollout_func`` mode): the kept dataset and the selection."""
    if not samples or factory is not None:
        return dataset, None
    from .selection import select_training_tasks

    selection = select_training_tasks(
        dataset, trainable, samples=samples, keep_at_least=2 * prompts_per_step, sampling=sampling
    )
    return selection.dataset, selection


def _start_from_selection(selection: Any, trainer: Any, log: TrainingLogWriter) -> dict[str, Any]:
    """Log the pre-pass and seed the rollout function's running pass rates with it; ``TrainResult.extra``."""
    if selection is None:
        return {}
    summary = selection.summary()
    log.write({"event": "task_selection", **summary})
    rollout_func = getattr(trainer, "rollout_func", None)
    if rollout_func is not None:
        rollout_func.reward_history.update(selection.history())
    return {"task_selection": summary}


def _sampling_options(
    trainable: Any, max_tokens: int, temperature: float, seed: int, max_turns: int | None, chat_template: str | None
) -> dict[str, Any]:
    """The hf policy options the evaluations sample with; applies ``chat_template`` to the tokenizer first."""
    options: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "seed": seed}
    if chat_template is not None:
        trainable.tokenizer.chat_template = options["chat_template"] = resolve_chat_template(chat_template)
    if max_turns is not None:
        options["max_turns"] = max_turns
    return options


def _evaluator(
    env_id: str,
    policy_options: Mapping[str, Any],
    env_kwargs: Mapping[str, Any] | None,
    split: str | None,
    num_rollouts: int,
    limit: int | None,
) -> Any:
    """``evaluate_policy`` on ``env_id`` with everything but the policy fixed (the same before and after)."""
    return functools.partial(
        evaluate_policy,
        env_id,
        split=split,
        num_rollouts=num_rollouts,
        policy_options=policy_options,
        env_kwargs=env_kwargs,
        limit=limit,
    )


def _evaluate_base(evaluation: Any, trainable: Any, torch: Any, training_threads: int) -> PolicyEvaluation:
    """The model before training; resets torch's threads, which the hf policy may lower for the whole process.

    The evaluation's process-wide copy of the model is dropped afterwards, so that training holds one copy.
    """
    import gc

    from rolloutgym_transformers import forget_model

    name = trainable.reference.removeprefix("hf:")
    before = evaluation(f"hf:{name}")
    forget_model(name)
    gc.collect()
    torch.set_num_threads(training_threads)
    return before


def _schedule(
    steps: int, num_generations: int, prompts_per_step: int, learning_rate: float, seed: int
) -> dict[str, Any]:
    """GRPOConfig's schedule, also recorded in the training log's header."""
    return {
        "steps": steps,
        "num_generations": num_generations,
        "prompts_per_step": prompts_per_step,
        "learning_rate": learning_rate,
        "seed": seed,
    }


def _checked_env_ids(env_ids: str | Sequence[str], mode: str) -> list[str]:
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if not ids:
        raise ConfigError("give at least one env id to train on")
    if mode not in ("rollout_func", "environment_factory"):
        raise ConfigError(f"mode={mode!r}: use rollout_func or environment_factory")
    if mode == "environment_factory" and len(ids) != 1:
        raise ConfigError("environment_factory trains on one env at a time; use mode='rollout_func' for a mixture")
    return [_trainable_id(reference) for reference in ids]


def _trainable_id(reference: str) -> str:
    """An env id the registry builds: an env file is resolved and adopted under its ``file/...`` id."""
    import rolloutgym as rg
    from rolloutgym.sources import is_env_file, is_env_url, resolve_env

    if is_env_url(reference):
        raise ConfigError(
            f"GRPO trains on a registered env id or an env file, not a served env ({reference}); "
            "train where the env is installed, or record a run on it and train SFT/DPO on that run"
        )
    if not is_env_file(reference):
        return reference
    return rg.get_registry().adopt(resolve_env(reference))


def _set_threads(torch: Any, threads: int | None) -> int:
    """Apply ``--threads`` and return the torch thread count training uses."""
    if threads is not None:
        if int(threads) < 1:
            raise ConfigError(f"--threads must be at least 1, got {threads}")
        torch.set_num_threads(int(threads))
    return torch.get_num_threads()


def _dataset_and_factory(
    ids: list[str], mode: str, split: str | None, env_kwargs: Mapping[str, Any] | None, tokenizer: Any
) -> tuple[Any, Any]:
    """The training dataset, and the environment factory in ``environment_factory`` mode (else None)."""
    if mode == "rollout_func":
        from .datasets import train_dataset

        return train_dataset(ids, split=split, env_kwargs=env_kwargs), None
    from .environment import environment_factory

    factory = environment_factory(ids[0], split=split, env_kwargs=env_kwargs)  # first: does the env have tools?
    check_tool_template(tokenizer)
    return factory.train_dataset, factory


def _grpo_trainer(
    trainable: Any,
    arguments: Any,
    dataset: Any,
    factory: Any,
    callbacks: list[Any],
    lora: bool | Mapping[str, Any],
    rollout: Mapping[str, Any],
) -> Any:
    """TRL's ``GRPOTrainer`` with rolloutgym's rollout function (``rollout``: its options), or with the env factory."""
    from trl import GRPOTrainer

    if factory is None:
        from .rollout import RolloutFunction
        from .rollout_fields import env_reward

        return GRPOTrainer(
            model=trainable.model,
            reward_funcs=[env_reward],
            args=arguments,
            train_dataset=dataset,
            processing_class=trainable.tokenizer,
            rollout_func=RolloutFunction(**rollout),
            peft_config=_lora_config(lora),
            callbacks=callbacks,
        )
    return GRPOTrainer(
        model=trainable.model,
        reward_funcs=factory.reward_funcs,
        args=arguments,
        train_dataset=dataset,
        processing_class=trainable.tokenizer,
        environment_factory=factory,
        peft_config=_lora_config(lora),
        callbacks=callbacks,
    )
