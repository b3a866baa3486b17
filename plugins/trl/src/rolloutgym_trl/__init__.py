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

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._logging import read_training_log
    from ._training import TrainResult
    from .curves import build_curves_report
    from .datasets import train_dataset
    from .environment import EnvironmentFactory, environment_factory
    from .evaluate import Comparison, PolicyEvaluation, evaluate_policy
    from .grpo import train_grpo
    from .offline import train_dpo, train_sft
    from .rollout import RolloutFunction
    from .rollout_fields import env_reward, episode_tensors
    from .vllm import TRLVLLMBatchSampler

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_logging": ["read_training_log"],
        "_training": ["TrainResult"],
        "curves": ["build_curves_report"],
        "datasets": ["train_dataset"],
        "environment": ["EnvironmentFactory", "environment_factory"],
        "evaluate": ["Comparison", "PolicyEvaluation", "evaluate_policy"],
        "grpo": ["train_grpo"],
        "offline": ["train_dpo", "train_sft"],
        "rollout": ["RolloutFunction"],
        "rollout_fields": ["env_reward", "episode_tensors"],
        "vllm": ["TRLVLLMBatchSampler"],
    },
)
