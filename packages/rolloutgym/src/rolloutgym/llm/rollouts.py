"""The seed's multi-turn rollout API by its names and argument order (``experience.rollouts``).

Port code written against the seed by changing its imports::

    from rolloutgym.llm.rollouts import run_multi_turn_rollout, run_async_multi_turn_rollout
    from rolloutgym.llm.environments import EnvironmentInterface, EnvironmentReturn

Each function is a thin door over :func:`rolloutgym.llm.arun_multi_turn_rollout` and keeps
the seed's semantics:

* ``run_multi_turn_rollout`` -- wave-synchronised: every still-active sample's next turn
  goes to the generation backend in one call.
* ``run_async_multi_turn_rollout`` / ``run_sample_multi_turn_rollout`` -- each sample runs
  free: its turn is sent as soon as it is ready (continuous batching is the engine's job),
  so a slow sample never holds the others back.
* ``generate_responses`` / ``generate_responses_async``, ``async_generate_response_for_sample_turn``
  -- one generation step over message logs; ``calculate_rewards`` -- one batched env step.

``policy_generation`` is a rolloutgym generation (a ``BatchSampler``, a ``TokenPolicy`` such
as ``rolloutgym.make_policy("hf:smollm2")``) or a NeMo-RL-style ``GenerationInterface``
(``generate(data, greedy)``, see :mod:`rolloutgym.llm.generation_interface`), rendered with
the ``tokenizer`` argument. ``task_to_env`` values are NeMo-style batched
envs (:class:`~rolloutgym.llm.environments.EnvironmentInterface`), rolloutgym env ids or env
factories. ``max_rollout_turns`` defaults to 999999 as in the seed.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._seed_rules import DEFAULT_MAX_ROLLOUT_TURNS, SeedBatch, check_tokenizer, seed_tensors, torch_or_none
from .batch import arun_multi_turn_rollout
from .configs import InvalidActionPenaltyConfig, StructuredToolUseConfig
from .environments import EnvironmentReturn, is_environment_interface
from .generation_interface import GenerationInterfaceSampler, is_generation_interface, seed_batch_sampler
from .sampling import SamplingParams

__all__ = [
    "async_generate_response_for_sample_turn",
    "calculate_rewards",
    "generate_responses",
    "generate_responses_async",
    "run_async_multi_turn_rollout",
    "run_multi_turn_rollout",
    "run_sample_multi_turn_rollout",
]


def _free_running(policy_generation: Any, tokenizer: Any) -> Any:
    """A NeMo-style generation with ``generate_async`` is called through it, as the seed's async rollouts do."""
    if is_generation_interface(policy_generation) and callable(getattr(policy_generation, "generate_async", None)):
        return GenerationInterfaceSampler(policy_generation, tokenizer, use_generate_async=True)
    return policy_generation


def _arollout(
    policy_generation: Any,
    input_batch: Any,
    tokenizer: Any,
    task_to_env: Mapping[str, Any],
    max_seq_len: int,
    max_rollout_turns: int,
    greedy: bool,
    invalid_action_cfg: InvalidActionPenaltyConfig | None,
    structured_cfg: StructuredToolUseConfig | None,
    *,
    free_running: bool,
) -> Any:
    """The seed's rollout arguments (in its order) as one :func:`arun_multi_turn_rollout` coroutine;
    ``free_running``: each sample runs free, through ``generate_async`` where the generation has it."""
    return arun_multi_turn_rollout(
        _free_running(policy_generation, tokenizer) if free_running else policy_generation,
        input_batch,
        task_to_env,
        tokenizer=tokenizer,
        max_seq_len=max_seq_len,
        max_rollout_turns=max_rollout_turns,
        greedy=greedy,
        invalid_action_cfg=invalid_action_cfg,
        structured_cfg=structured_cfg,
        free_running=free_running,
    )


def _seed(coroutine: Any) -> tuple[SeedBatch, dict[str, Any]]:
    batch, metrics = _run(coroutine)
    return SeedBatch.of(batch), metrics


def _run(coroutine: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise RuntimeError("this seed function runs its own event loop; inside a running loop, await its async twin")


def run_multi_turn_rollout(
    policy_generation: Any,
    input_batch: Any,
    tokenizer: Any,
    task_to_env: Mapping[str, Any],
    max_seq_len: int,
    max_rollout_turns: int = DEFAULT_MAX_ROLLOUT_TURNS,
    greedy: bool = False,
    invalid_action_cfg: InvalidActionPenaltyConfig | None = None,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Multi-turn rollouts in waves: returns ``(batch, rollout_metrics)`` (a :class:`SeedBatch`)."""
    return _seed(
        _arollout(
            policy_generation, input_batch, tokenizer, task_to_env, max_seq_len, max_rollout_turns, greedy,
            invalid_action_cfg, structured_cfg, free_running=False,
        )
    )  # fmt: skip


def run_async_multi_turn_rollout(
    policy_generation: Any,
    input_batch: Any,
    tokenizer: Any,
    task_to_env: Mapping[str, Any],
    max_seq_len: int,
    max_rollout_turns: int = DEFAULT_MAX_ROLLOUT_TURNS,
    greedy: bool = False,
    invalid_action_cfg: InvalidActionPenaltyConfig | None = None,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Multi-turn rollouts with each sample free-running (synchronous, as in the seed): ``(SeedBatch, metrics)``."""
    return _seed(
        _arollout(
            policy_generation, input_batch, tokenizer, task_to_env, max_seq_len, max_rollout_turns, greedy,
            invalid_action_cfg, structured_cfg, free_running=True,
        )
    )  # fmt: skip


async def run_sample_multi_turn_rollout(
    sample_idx: int,
    initial_sample_state: Mapping[str, Any],
    policy_generation: Any,
    tokenizer: Any,
    task_to_env: Mapping[str, Any],
    max_seq_len: int,
    max_rollout_turns: int = DEFAULT_MAX_ROLLOUT_TURNS,
    greedy: bool = False,
    invalid_action_cfg: InvalidActionPenaltyConfig | None = None,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One sample's whole interaction: ``(final_sample_state, sample_metrics)``.

    The final state is the sample's fields plus every result column (``message_log`` is
    the full history); ``sample_metrics`` are the rollout metrics of this one sample.
    """
    batch, metrics = await _arollout(
        policy_generation, [dict(initial_sample_state)], tokenizer, task_to_env, max_seq_len, max_rollout_turns,
        greedy, invalid_action_cfg, structured_cfg, free_running=True,
    )  # fmt: skip
    state = batch.rows()[0]
    state["message_log"] = seed_tensors(state["message_log"])
    state["idx"] = initial_sample_state.get("idx", sample_idx)
    return state, metrics


def _sampler(policy_generation: Any, tokenizer: Any) -> Any:
    """The batch sampler behind ``policy_generation`` (a NeMo-style generation renders with ``tokenizer``)."""
    return seed_batch_sampler(policy_generation, tokenizer if is_generation_interface(policy_generation) else None)


def _prompt_rows(generation_input_data: Mapping[str, Any], input_lengths: Any) -> list[list[int]]:
    rows = generation_input_data["input_ids"]
    lengths = input_lengths if input_lengths is not None else generation_input_data.get("input_lengths")
    rows = rows.tolist() if hasattr(rows, "tolist") else [list(row) for row in rows]
    lengths = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths or [len(row) for row in rows])
    return [[int(token) for token in row[: int(length)]] for row, length in zip(rows, lengths, strict=True)]


async def generate_responses_async(
    policy_generation: Any,
    generation_input_data: Mapping[str, Any],
    batch: Mapping[str, Any],
    tokenizer: Any,
    input_lengths: Any,
    include_logprobs: bool = True,
    greedy: bool = False,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[Mapping[str, Any], list[Any], dict[str, Any]]:
    """One generation step: append each sample's reply to ``batch["message_log"]``.

    ``generation_input_data`` has ``input_ids`` (rows, padded) and optionally
    ``stop_strings`` per row; ``input_lengths`` gives each row's prompt length. Returns
    ``(batch, generated_ids, metrics)``; the appended assistant messages carry
    ``token_ids`` (verbatim) and, with ``include_logprobs``, ``generation_logprobs`` (torch
    tensors as in the seed when torch is installed, else lists; ``generated_ids`` likewise).
    ``structured_cfg`` controls only the decode of the content.
    """
    sampler = _sampler(policy_generation, tokenizer)
    check_tokenizer(tokenizer, sampler.renderer)
    prompts = _prompt_rows(generation_input_data, input_lengths)
    stops = generation_input_data.get("stop_strings") or [None] * len(prompts)
    renderer = sampler.renderer
    params = [
        SamplingParams(
            max_tokens=int(getattr(policy_generation, "max_tokens", None) or getattr(sampler, "max_tokens", 512)),
            temperature=0.0 if greedy else float(getattr(policy_generation, "temperature", 1.0)),
            stop=tuple(stop or ()),
            stop_token_ids=tuple(renderer.stop_token_ids),
        )
        for stop in stops
    ]
    result = sampler.generate(prompts, params)
    samples = list(await result if asyncio.iscoroutine(result) else result)
    skip = structured_cfg is not None and structured_cfg.decode_skip_special_tokens and hasattr(renderer, "decode_text")
    logs = batch["message_log"]
    generated: list[Any] = []
    for index, sample in enumerate(samples):
        text = renderer.decode_text(sample.token_ids) if skip else renderer.decode(sample.token_ids)
        message: dict[str, Any] = {"role": "assistant", "content": text, "token_ids": list(sample.token_ids)}
        if include_logprobs and sample.logprobs is not None:
            message["generation_logprobs"] = list(sample.logprobs)
        message = seed_tensors([message])[0]
        logs[index].append(message)
        generated.append(message["token_ids"])
    lengths = [len(tokens) for tokens in generated]
    metrics = {"mean_generation_length": sum(lengths) / max(1, len(lengths)), "total_generated_tokens": sum(lengths)}
    return batch, generated, metrics


def generate_responses(
    policy_generation: Any,
    generation_input_data: Mapping[str, Any],
    batch: Mapping[str, Any],
    tokenizer: Any,
    input_lengths: Any,
    include_logprobs: bool = True,
    greedy: bool = False,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[Mapping[str, Any], list[Any], dict[str, Any]]:
    """The synchronous twin of :func:`generate_responses_async`."""
    return _run(
        generate_responses_async(
            policy_generation, generation_input_data, batch, tokenizer, input_lengths, include_logprobs, greedy,
            structured_cfg,
        )
    )  # fmt: skip


async def async_generate_response_for_sample_turn(
    policy_generation: Any,
    sample_message_log: list[dict[str, Any]],
    sample_stop_strings: list[str] | None,
    tokenizer: Any,
    max_seq_len: int,
    greedy: bool = False,
    structured_cfg: StructuredToolUseConfig | None = None,
) -> tuple[list[dict[str, Any]], Any, int, dict[str, Any]]:
    """One turn of one sample: ``(updated_message_log, generated_tokens, input_length, metrics)``.

    The prompt is the message log rendered by the generation's renderer (the messages'
    own ``token_ids`` are used as they are when every message has them).
    """
    sampler = _sampler(policy_generation, tokenizer)
    if all("token_ids" in message for message in sample_message_log):
        prompt = [int(token) for message in sample_message_log for token in message["token_ids"]]
    else:
        prompt = list(sampler.renderer.render_prompt(sample_message_log, []))
    if len(prompt) >= max_seq_len:
        raise ConfigError(f"the sample's prompt has {len(prompt)} tokens, max_seq_len is {max_seq_len}")
    data = {"input_ids": [prompt], "stop_strings": [sample_stop_strings]}
    log = [dict(message) for message in sample_message_log]
    _, generated, metrics = await generate_responses_async(
        policy_generation, data, {"message_log": [log]}, tokenizer, [len(prompt)], True, greedy, structured_cfg
    )
    return log, generated[0], len(prompt), metrics


def calculate_rewards(batch: Mapping[str, Any] | Sequence[Mapping[str, Any]], task_to_env: Mapping[str, Any]) -> Any:
    """One batched env step for every sample: an :class:`EnvironmentReturn` in sample order.

    Samples are grouped by ``task_name``; each env gets one ``step(message_logs, metadata)``
    call with its samples' ``message_log`` and ``extra_env_info``. ``rewards`` and
    ``terminateds`` are torch tensors as in the seed when torch is installed, else lists.
    """
    rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)] if isinstance(
        batch, Mapping
    ) else [dict(row) for row in batch]  # fmt: skip
    groups: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        groups[row["task_name"]].append(index)
    columns: list[list[Any]] = [[None] * len(rows) for _ in range(6)]
    for name, members in groups.items():
        env = task_to_env.get(name)
        if not is_environment_interface(env):
            raise ConfigError(
                f"task_to_env[{name!r}] must be a batched EnvironmentInterface for calculate_rewards "
                "(wrap a rolloutgym env with rolloutgym.llm.environments.RolloutgymEnvironment)"
            )
        result = env.step([rows[i]["message_log"] for i in members], [rows[i].get("extra_env_info") for i in members])
        for field, values in enumerate(result):
            for position, index in enumerate(members):
                columns[field][index] = None if values is None else values[position]
    rewards = [float(_item(value)) for value in columns[3]]
    terminateds = [bool(_item(value)) for value in columns[4]]
    torch = torch_or_none()
    if torch is not None:  # the seed's tensors
        rewards, terminateds = torch.tensor(rewards, dtype=torch.float32), torch.tensor(terminateds, dtype=torch.bool)
    return EnvironmentReturn(
        columns[0], columns[1], columns[2], rewards, terminateds,
        columns[5] if any(value is not None for value in columns[5]) else None,
    )  # fmt: skip


def _item(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
