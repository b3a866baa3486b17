"""rolloutgym-trl: train language models on rolloutgym environments with TRL.

* :func:`environment_factory` — what ``GRPOTrainer(environment_factory=...)`` expects for a
  tool-calling env: a class whose methods are the env's tools, plus its ``train_dataset``
  and ``reward_funcs`` (the env's own Score).
* :class:`RolloutFunction` + :func:`env_reward` — a ``rollout_func`` that plays episodes of
  any env (or a mixture) with rolloutgym's token-exact loop.
* :func:`train_grpo`, :func:`train_sft`, :func:`train_dpo` — what ``rolloutgym train``
  runs: train, save a model usable as ``--policy hf:OUT``, compare before and after.

Importing this package is cheap; trl, torch and transformers load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Comparison",
    "EnvironmentFactory",
    "Evaluation",
    "RolloutFunction",
    "TrainResult",
    "build_curves_report",
    "env_reward",
    "environment_factory",
    "episode_tensors",
    "evaluate_policy",
    "read_training_log",
    "train_dataset",
    "train_dpo",
    "train_grpo",
    "train_sft",
]

_HOMES = {
    "Comparison": "evaluate",
    "Evaluation": "evaluate",
    "evaluate_policy": "evaluate",
    "EnvironmentFactory": "environment",
    "environment_factory": "environment",
    "RolloutFunction": "rollout",
    "env_reward": "rollout",
    "episode_tensors": "rollout",
    "TrainResult": "grpo",
    "train_grpo": "grpo",
    "train_sft": "offline",
    "train_dpo": "offline",
    "train_dataset": "datasets",
    "read_training_log": "_logging",
    "build_curves_report": "curves",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'rolloutgym_trl' has no attribute {name!r}")
