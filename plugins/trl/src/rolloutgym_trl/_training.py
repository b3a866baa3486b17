"""What the three trainers share: the result, the local-run config, LoRA, train-and-save, the comparison.

:func:`~rolloutgym_trl.train_grpo` (:mod:`.grpo`), :func:`~rolloutgym_trl.train_sft` and
:func:`~rolloutgym_trl.train_dpo` (:mod:`.offline`) each build their TRL config with :func:`make_config`
from :data:`LOCAL_RUN_OPTIONS` and the device's options, take the same LoRA options (``--lora``),
save the model where ``--policy hf:OUT`` loads it, and return a :class:`TrainResult` with the
before/after comparison (also written to the training log).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.errors import ConfigError

from ._logging import TrainingLogWriter
from ._models import save_trained
from .evaluate import Comparison, PolicyEvaluation

__all__ = ["LOCAL_RUN_OPTIONS", "TrainResult", "make_config"]


@dataclass
class TrainResult:
    """What a training command produced."""

    output_dir: Path
    log_path: Path
    records: list[dict[str, Any]]
    comparison: Comparison | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def curve(self, key: str = "reward") -> list[float]:
        """The per-step values of one logged metric (``reward``, ``loss``, ``kl``...)."""
        return [float(record[key]) for record in self.records if isinstance(record.get(key), (int, float))]


def _device_options() -> dict[str, Any]:
    import torch

    if torch.cuda.is_available():
        return {"bf16": torch.cuda.is_bf16_supported()}
    return {"use_cpu": True, "bf16": False, "fp16": False}


# The TrainingArguments of every short local run here: log every step, no checkpoints, no reporters, no
# progress bars (the training log and ``on_log`` report progress). TRL turns activation checkpointing on by
# default; it recomputes every forward pass, which small models on a CPU do not need
# (--trainer-arg activation_checkpointing=true).
LOCAL_RUN_OPTIONS: dict[str, Any] = {
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "disable_tqdm": True,
    "activation_checkpointing": False,
}


def make_config(config_class: Any, options: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> Any:
    """``config_class(**options)`` with ``overrides`` (``--trainer-arg KEY=VALUE``) replacing any option.

    Raises:
        ConfigError: an override names no field of ``config_class``, or the config refuses the values.
    """
    import dataclasses

    fields = {field.name for field in dataclasses.fields(config_class)}
    unknown = sorted(set(overrides or {}) - fields)
    if unknown:
        raise ConfigError(
            f"--trainer-arg {unknown[0]}=...: {config_class.__name__} has no field {unknown[0]!r} "
            f"(its fields are TRL's {config_class.__name__} and transformers' TrainingArguments)"
        )
    try:
        return config_class(**{**options, **dict(overrides or {})})
    except (TypeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{config_class.__name__} refused the training options: {message}") from None


def _lora_config(lora: bool | Mapping[str, Any]) -> Any:
    if not lora:
        return None
    try:
        from peft import LoraConfig
    except ImportError:
        raise ConfigError(f"--lora needs the 'peft' package: {pip_install('rolloutgym-trl', 'lora')}") from None
    options = {"r": 16, "lora_alpha": 32, "lora_dropout": 0.0, "target_modules": "all-linear", "task_type": "CAUSAL_LM"}
    if isinstance(lora, Mapping):
        options.update(lora)
    return LoraConfig(**options)


def _quiet(trainer: Any) -> None:
    """The training log and ``on_log`` report progress; drop the trainer's own stdout printer."""
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)


def _train_and_save(trainer: Any, trainable: Any, out_dir: Path) -> None:
    """Train quietly (the training log reports progress) and save the model where ``--policy hf:OUT`` loads it."""
    _quiet(trainer)
    trainer.train()
    save_trained(trainer.model, trainable.tokenizer, out_dir)


def _compare(before: PolicyEvaluation, after: PolicyEvaluation, log: TrainingLogWriter) -> Comparison:
    """The before/after comparison, also written to the training log."""
    log.write(
        {
            "event": "evaluation",
            **{f"before/{k}": v for k, v in before.to_dict().items()},
            **{f"after/{k}": v for k, v in after.to_dict().items()},
        }
    )
    return Comparison(before, after)
