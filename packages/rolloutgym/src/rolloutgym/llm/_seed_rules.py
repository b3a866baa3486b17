"""Rules the seed's batch API states, applied after a batch is rolled out.

* the ``tokenizer`` a trainer passes must encode as the generation's renderer does;
* samples that ended before the model spoke (``prompt_too_long``) are announced with a
  warning naming the count (their reward columns are ``None``, see ``rollout_batch``);
* an :class:`~rolloutgym.llm.InvalidActionPenaltyConfig` turns the per-sample counts into a
  reward penalty;
* the ``message_log`` column: each sample's whole interaction as messages with token ids;
* :class:`SeedBatch`: what the seed's functions return, whose tensor columns
  (``total_reward``, ``env_reward``, ``truncated``, the ``message_log`` token ids and logprobs)
  are ``torch`` tensors as in the seed, when torch is installed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError

from .messages import content_text, observation_messages
from .rollout_batch import UNANSWERED, RolloutBatch

if TYPE_CHECKING:
    from .configs import InvalidActionPenaltyConfig

__all__ = [
    "DEFAULT_MAX_ROLLOUT_TURNS",
    "SeedBatch",
    "check_tokenizer",
    "finish_batch",
    "message_log",
    "seed_tensors",
    "torch_or_none",
]

DEFAULT_MAX_ROLLOUT_TURNS = 999999
"""The seed's default for ``max_rollout_turns`` (no turn limit in practice)."""

_PROBE = 'The tokenizer check: 12 + 30 = 42. <tool_call> {"name": "x"} </tool_call> Ünïcödé'


def _encode(tokenizer: Any, text: str) -> list[int]:
    encode = getattr(tokenizer, "encode", None)
    if not callable(encode):
        raise ConfigError(f"tokenizer must have an encode(text) method, got {type(tokenizer).__name__}")
    try:
        ids = encode(text, add_special_tokens=False)
    except TypeError:
        ids = encode(text)
    return [int(token) for token in (ids.tolist() if hasattr(ids, "tolist") else ids)]


def check_tokenizer(tokenizer: Any, renderer: Any) -> None:
    """Refuse a trainer tokenizer that encodes differently from the generation's renderer."""
    if tokenizer is None:
        return
    own = getattr(renderer, "tokenizer", None)
    if own is tokenizer:
        return
    reference = own if own is not None else renderer
    try:
        expected = _encode(reference, _PROBE)
    except ConfigError:
        return  # the renderer cannot encode plain text: nothing to compare with
    if _encode(tokenizer, _PROBE) != expected:
        raise ConfigError(
            f"the tokenizer passed ({type(tokenizer).__name__}) encodes text differently from the generation's "
            f"renderer ({type(renderer).__name__}); pass the tokenizer of the model that generates, or "
            "tokenizer=None to use the renderer's own"
        )


def message_log(trajectory: Trajectory | None) -> list[dict[str, Any]]:
    """A trajectory as the seed's message log: env turns and assistant turns, with token ids.

    The first entry is the rendered first prompt (``role="user"``, its messages' text as
    ``content``); later env turns have ``role="environment"``; assistant turns carry
    ``token_ids`` and ``generation_logprobs`` as sampled. The env's reply to the last
    assistant turn ends the log (with empty ``token_ids``: the model never saw it).
    """
    if trajectory is None:
        return []
    log: list[dict[str, Any]] = []
    for index, step in enumerate(trajectory.steps):
        if step.observation_tokens:
            text = "\n".join(content_text(m.get("content")) for m in _messages(step.observation))
            role = "user" if index == 0 else "environment"
            log.append({"role": role, "content": text, "token_ids": list(step.observation_tokens)})
        if step.policy_tokens:
            entry: dict[str, Any] = {
                "role": "assistant",
                "content": str((step.policy_info or {}).get("text", "")),
                "token_ids": list(step.policy_tokens),
            }
            if step.policy_logprobs is not None:
                entry["generation_logprobs"] = list(step.policy_logprobs)
            log.append(entry)
    final = _final_reply(trajectory)
    if final is not None:
        log.append(final)
    return log


def _final_reply(trajectory: Trajectory) -> dict[str, Any] | None:
    """The env's answer to the last assistant turn, as the seed appends it when an episode ends.

    It never entered the model's context, so its ``token_ids`` are empty (the log's token
    ids stay the trajectory's token sequence). ``None`` when the model did not speak last
    (the episode was cut by ``max_turns`` or ``max_seq_len``) or the env said nothing.
    """
    if not trajectory.steps or not trajectory.steps[-1].policy_tokens:
        return None
    messages = _messages(trajectory.steps[-1].next_observation) if trajectory.steps[-1].next_observation else []
    text = "\n".join(content_text(m.get("content")) for m in messages)
    if not text:
        return None
    return {"role": "environment", "content": text, "token_ids": []}


def _messages(observation: Any) -> list[dict[str, Any]]:
    try:
        return [dict(message) for message in observation_messages(observation)]
    except Exception:  # an observation that is not chat-shaped: keep its text
        return [{"content": str(observation)}]


def finish_batch(batch: RolloutBatch, invalid_action_cfg: InvalidActionPenaltyConfig | None) -> None:
    """Add ``message_log`` and ``env_reward``, apply the penalty, warn about unanswered samples."""
    columns = batch.columns
    columns["message_log"] = [message_log(trajectory) for trajectory in batch.trajectories]
    columns["env_reward"] = list(columns["total_reward"])
    if invalid_action_cfg is not None and invalid_action_cfg.enabled:
        columns["total_reward"] = [
            None if reward is None else reward - invalid_action_cfg.penalty(invalid, malformed)
            for reward, invalid, malformed in zip(
                columns["total_reward"],
                columns["invalid_action_count"],
                columns["malformed_thinking_count"],
                strict=True,
            )
        ]
    unanswered = sum(1 for stop in columns["stop_reason"] if stop in UNANSWERED)
    if unanswered:
        warnings.warn(
            f"{unanswered} of {len(batch)} samples ended before the model spoke: their first prompt is longer "
            "than max_seq_len (stop_reason='prompt_too_long'; their reward columns are None). Raise "
            "max_seq_len or shorten the prompts.",
            RuntimeWarning,
            stacklevel=3,
        )


def torch_or_none() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def seed_tensors(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A message log with ``token_ids`` (int64) and ``generation_logprobs`` (float32) as torch
    tensors, as the seed keeps them (unchanged without torch)."""
    torch = torch_or_none()
    if torch is None:
        return log
    converted = []
    for message in log:
        entry = dict(message)
        if isinstance(entry.get("token_ids"), list):
            entry["token_ids"] = torch.tensor(entry["token_ids"], dtype=torch.int64)
        if isinstance(entry.get("generation_logprobs"), list):
            entry["generation_logprobs"] = torch.tensor(entry["generation_logprobs"], dtype=torch.float32)
        converted.append(entry)
    return converted


_FLOAT_COLUMNS = ("total_reward", "env_reward")
_BOOL_COLUMNS = ("truncated", "terminated", "max_turns_reached")


@dataclass(frozen=True)
class SeedBatch(RolloutBatch):
    """The result of the seed's rollout functions: a :class:`~rolloutgym.llm.RolloutBatch` whose
    seed columns come as the seed's tensors when torch is installed.

    ``batch["total_reward"]`` and ``batch["env_reward"]`` are float tensors (``NaN`` for a sample
    that has no reward: failed, or ``prompt_too_long``), ``batch["truncated"]`` (and
    ``terminated``, ``max_turns_reached``) bool tensors, and each ``batch["message_log"]``
    entry's ``token_ids`` / ``generation_logprobs`` tensors. Every other column, ``rows()``,
    ``columns`` and ``to_tensors()`` are the RolloutBatch's own (plain lists).
    """

    views: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, batch: RolloutBatch) -> SeedBatch:
        return cls(batch.samples, batch.trajectories, batch.errors, batch.columns, batch.metrics, batch.pad_token_id)

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        torch = torch_or_none()
        if torch is None or key not in (*_FLOAT_COLUMNS, *_BOOL_COLUMNS, "message_log"):
            return value
        if key not in self.views:
            if key == "message_log":
                self.views[key] = [seed_tensors(log) for log in value]
            elif key in _FLOAT_COLUMNS:
                numbers = [math.nan if item is None else float(item) for item in value]
                self.views[key] = torch.tensor(numbers, dtype=torch.float32)
            else:
                self.views[key] = torch.tensor([bool(item) for item in value], dtype=torch.bool)
        return self.views[key]
