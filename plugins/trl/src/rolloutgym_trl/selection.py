"""Difficulty selection: train on the tasks the starting model solves sometimes.

A task the model always fails, or always solves, gives GRPO groups with one reward for
every member, hence no gradient. :func:`select_training_tasks` plays every training task
``samples`` times with the starting model (batched: one padded forward pass per decoded
token for a chunk of episodes), keeps the tasks whose episodes got different rewards
(solved sometimes, failed sometimes; or partial credit that varies), and tops the set up
with the tasks closest to a 50 % pass rate when too few are mixed. It is the cheap
pre-pass of ``rolloutgym train grpo --select-tasks N``; the rollout function then keeps
running pass rates for its resampling (:class:`rolloutgym_trl.RolloutFunction`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from .datasets import task_key
from .stats import has_spread

__all__ = ["TaskSelection", "batched_rewards", "select_training_tasks"]

_CHUNK = 64  # episodes per batched call (bounds the KV cache)


@dataclass
class TaskSelection:
    """The pre-pass result: the kept dataset and every task's observed passes."""

    dataset: Any
    rewards: dict[str, list[float]]
    kept: list[str]
    seconds: float

    def summary(self) -> dict[str, Any]:
        """Counts for the training log and the terminal."""
        rates = [sum(value >= 1.0 for value in values) / len(values) for values in self.rewards.values() if values]
        return {
            "tasks": len(self.rewards),
            "kept": len(self.kept),
            "never_solved": sum(rate == 0 for rate in rates),
            "always_solved": sum(rate == 1 for rate in rates),
            "flat": sum(not has_spread(values) for values in self.rewards.values()),
            "pass_rate": sum(rates) / len(rates) if rates else 0.0,
            "episodes": sum(len(values) for values in self.rewards.values()),
            "selection_seconds": round(self.seconds, 2),
        }

    def history(self) -> dict[str, Any]:
        """Task key -> recent rewards, the starting point of the rollout function's running pass rates."""
        from collections import deque

        from .rollout import _RECENT

        return {key: deque(values, maxlen=_RECENT) for key, values in self.rewards.items()}


def batched_rewards(
    model: Any, tokenizer: Any, keys: list[str], samples: int, sampling: Mapping[str, Any]
) -> dict[str, list[float]]:
    """Play each task key (``ENV_ID#TASK_ID``) ``samples`` times with ``model``, batched; task key -> rewards.

    ``sampling``: ``max_tokens``, optional ``temperature`` (1.0; 0 for greedy decoding), ``seed``
    (0), ``max_turns`` and ``chat_template``. A failed episode contributes no reward.
    """
    import rolloutgym as rg
    from rolloutgym.llm import ChatTemplateRenderer, run_multi_turn_rollout
    from rolloutgym_transformers import TransformersSampler

    from .datasets import split_task_key

    registry = rg.get_registry()
    was_training = model.training
    model.eval()
    renderer = ChatTemplateRenderer(tokenizer, chat_template=sampling.get("chat_template"))
    batcher = TransformersSampler(model, tokenizer, device=str(model.device)).batch_sampler(renderer)
    rows = [{"task_name": split_task_key(key)[0], "task": split_task_key(key)[1], "key": key} for key in keys]
    rows = [row for row in rows for _ in range(samples)]
    task_to_env = {row["task_name"]: row["task_name"] for row in rows}
    budget = max(int(registry.resolve_env(env).spec.max_steps or 1) for env in task_to_env)
    rewards: dict[str, list[float]] = {key: [] for key in keys}
    try:
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            batch, _ = run_multi_turn_rollout(
                batcher,
                chunk,
                task_to_env,
                max_seq_len=int(getattr(model.config, "max_position_embeddings", 4096) or 4096),
                max_rollout_turns=int(sampling.get("max_turns") or budget),
                max_tokens=int(sampling["max_tokens"]),
                temperature=float(sampling.get("temperature", 1.0)) or 1.0,
                greedy=float(sampling.get("temperature", 1.0)) == 0.0,
                seed=int(sampling.get("seed", 0)) + start,
            )
            for row, reward in zip(chunk, batch["total_reward"], strict=True):
                if reward is not None:
                    rewards[row["key"]].append(float(reward))
    finally:
        model.train(was_training)
    return rewards


def select_training_tasks(
    dataset: Any, trainable: Any, *, samples: int, keep_at_least: int, sampling: Mapping[str, Any]
) -> TaskSelection:
    """Keep the rows of ``dataset`` (a :func:`~rolloutgym_trl.train_dataset`) whose task the model solves sometimes.

    Args:
        dataset: the training dataset (rows with ``env_id`` and ``task_id``).
        trainable: the starting model (:func:`~rolloutgym_trl._models.load_trainable`).
        samples: episodes per task (2 or more: one episode cannot show a mixed result).
        keep_at_least: the fewest rows kept (topped up with the tasks closest to 50 %).
        sampling: ``max_tokens``, ``temperature``, ``seed``, optional ``max_turns`` and ``chat_template``.
    """
    if samples < 2:
        raise ConfigError(f"--select-tasks needs at least 2 episodes per task to see mixed results, got {samples}")
    started = time.perf_counter()
    keys = [task_key(row["env_id"], row["task_id"]) for row in dataset]
    rewards = batched_rewards(trainable.model, trainable.tokenizer, sorted(set(keys)), samples, sampling)

    def rate(key: str) -> float:
        values = rewards.get(key) or []
        return sum(value >= 1.0 for value in values) / len(values) if values else 0.0

    mixed = [index for index, key in enumerate(keys) if has_spread(rewards.get(keys[index]) or [])]
    if len(mixed) < keep_at_least:
        rest = sorted(
            (index for index in range(len(keys)) if index not in set(mixed)), key=lambda i: abs(rate(keys[i]) - 0.5)
        )
        mixed = sorted(mixed + rest[: keep_at_least - len(mixed)])
    kept = [keys[index] for index in mixed]
    return TaskSelection(dataset.select(mixed), rewards, kept, time.perf_counter() - started)
