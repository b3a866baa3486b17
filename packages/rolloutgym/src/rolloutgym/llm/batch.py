"""The trainer-facing batch API: :func:`run_multi_turn_rollout` over a mixed batch of tasks.

One call takes a whole batch of samples, each naming its task (``task_name``, routed to
an environment through ``task_to_env``) and the task itself (an index, id or item of that
environment). Every sample runs the token-exact LLM loop of
:class:`~rolloutgym.llm.TokenPolicy` (rendering, parsing, stop strings set by the env,
``max_seq_len`` and ``max_rollout_turns``, invalid-action counters, provenance), but
the model is called in *waves*: once every still-active sample is waiting for its next
turn, their prompts go to the :class:`~rolloutgym.llm.BatchSampler` in one call, in
sample order. Samples leave the batch as they finish, so the waves shrink.

So a sample's trajectory is the one it would have alone with the same sampler (same
tokens under greedy decoding or per-sample seeds); only the number of model calls
changes: one per wave instead of one per sample and turn.

Failures: a sample whose environment raises (at creation, reset or step) keeps its
:class:`~rolloutgym.RolloutError` and the others finish; a generation backend that fails
fails the whole call with a :class:`~rolloutgym.errors.PolicyError` naming the backend
and the wave.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory
from rolloutgym_protocol.errors import ConfigError

from ._routes import Route, TaskEnv, batch_samples, plan_routes
from ._seed_rules import DEFAULT_MAX_ROLLOUT_TURNS, check_tokenizer, finish_batch
from ._waves import FreeRunning, Waves, WaveSlot
from .configs import InvalidActionPenaltyConfig, StructuredToolUseConfig
from .generation import BatchSampler
from .generation_interface import is_generation_interface, seed_batch_sampler
from .renderers import Renderer
from .rollout_batch import RolloutBatch, batch_columns, batch_metrics
from .token_policy import TokenPolicy

__all__ = ["arun_multi_turn_rollout", "run_multi_turn_rollout"]


def _default(value: Any, generation: Any, attribute: str, fallback: Any) -> Any:
    if value is not None:
        return value
    if isinstance(generation, TokenPolicy):
        return getattr(generation, attribute)
    return fallback


async def arun_multi_turn_rollout(
    generation: Any,
    batch: Any,
    task_to_env: Mapping[str, TaskEnv],
    *,
    max_seq_len: int,
    max_rollout_turns: int = DEFAULT_MAX_ROLLOUT_TURNS,
    greedy: bool = False,
    tokenizer: Any = None,
    invalid_action_cfg: InvalidActionPenaltyConfig | None = None,
    structured_cfg: StructuredToolUseConfig | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
    keep_thinking: bool | None = None,
    renderer: Renderer | None = None,
    registry: Any = None,
    free_running: bool = False,
) -> tuple[RolloutBatch, dict[str, Any]]:
    """Roll out a mixed batch of tasks with one batched generation call per wave.

    Args:
        generation: a :class:`~rolloutgym.llm.BatchSampler`, a
            :class:`~rolloutgym.llm.TokenPolicy` (e.g. ``rolloutgym.make_policy("hf:tiny")``:
            batched through its sampler), a per-request Sampler with ``renderer=``, or a
            NeMo-RL-style ``GenerationInterface`` (rendered with ``tokenizer``).
        batch: samples (a list of dicts, a ``datasets.Dataset`` or a dict of columns),
            each with ``task_name`` and ``task`` (an index, id or item of the env);
            other fields come back unchanged.
        task_to_env: task name -> registered env id, or ``factory(task) -> env`` (sync
            or async env, or an awaitable of one).
        max_seq_len: the most tokens in a sample's context (prompt, observations and
            samples); a sample that reaches it is truncated.
        max_rollout_turns: the most assistant turns per sample; then the sample ends
            (``stop_reason="max_turns"``). Default 999999, as in the seed.
        greedy: argmax decoding.
        tokenizer, invalid_action_cfg, structured_cfg: the seed's arguments (see
            :mod:`rolloutgym.llm.configs`): a tokenizer that encodes unlike the renderer
            is a ``ConfigError``; the penalty config lowers ``total_reward``
            (``env_reward`` keeps the env's); ``structured_cfg=None`` is the fenced-text path.
        max_tokens: the most tokens per turn (default: the TokenPolicy's, else what
            fits in ``max_seq_len``).
        temperature, top_p, stop, keep_thinking: default: the TokenPolicy's, else 1.0,
            1.0, none, False.
        seed: sample ``i`` resets its env with ``seed + i`` and samples turn ``t`` with
            ``seed + 1000 * i + t``, so results do not depend on the batch composition.
        renderer: replaces the generation's renderer; registry: for env ids (default: global).
        free_running: send each sample's turn alone as soon as it is ready (no waves).

    Returns:
        ``(batch, metrics)``: a :class:`~rolloutgym.llm.RolloutBatch` in sample order,
        and the metrics dict (also ``batch.metrics``).

    Raises:
        ConfigError: malformed samples or ``task_to_env``; an unknown task name.
        EnvNotFound, TaskNotFound: an env id or a task that does not exist.
        PolicyError: the generation backend failed.
    """
    started = time.perf_counter()
    _check_limits(max_seq_len, max_rollout_turns)
    sampler, samples, plan = _prepare(generation, batch, task_to_env, renderer, registry, tokenizer)
    check_tokenizer(tokenizer, sampler.renderer)
    chosen = dict(max_tokens=max_tokens, temperature=temperature, top_p=top_p, stop=stop, keep_thinking=keep_thinking)
    base = _base_policy(
        generation, sampler, chosen, max_seq_len=max_seq_len, max_turns=max_rollout_turns, greedy=greedy
    )
    base.structured_cfg = structured_cfg
    waves = (FreeRunning if free_running else Waves)(sampler, len(samples))
    episodes = (
        _run_sample(sample, route, index, base, waves, seed=seed, max_turns=max_rollout_turns)
        for index, (sample, route) in enumerate(zip(samples, plan, strict=True))
    )
    results = await asyncio.gather(*episodes)
    if waves.failure is not None:
        raise waves.failure
    rolled, metrics = _assemble(samples, plan, results, waves, sampler, started)
    finish_batch(rolled, invalid_action_cfg)
    return rolled, metrics


def _prepare(
    generation: Any,
    batch: Any,
    task_to_env: Mapping[str, TaskEnv],
    renderer: Renderer | None,
    registry: Any,
    tokenizer: Any = None,
) -> tuple[BatchSampler, list[Mapping[str, Any]], list[Route]]:
    """The batch sampler, the samples and each sample's route (everything checked before generating).

    A NeMo-style generation (``generate(data, greedy)``) renders with ``tokenizer`` unless ``renderer`` is given.
    """
    if renderer is None and is_generation_interface(generation):
        renderer = tokenizer
    sampler = seed_batch_sampler(generation, renderer)
    if registry is None:
        from ..registry import get_registry

        registry = get_registry()
    samples = batch_samples(batch)
    return sampler, samples, plan_routes(samples, task_to_env, registry)


def _check_limits(max_seq_len: int, max_rollout_turns: int) -> None:
    if max_seq_len is None or max_seq_len < 2:
        raise ConfigError(f"max_seq_len must be at least 2, got {max_seq_len}")
    if max_rollout_turns is None or max_rollout_turns < 1:
        raise ConfigError(f"max_rollout_turns must be at least 1, got {max_rollout_turns}")


def _base_policy(
    generation: Any, sampler: BatchSampler, chosen: Mapping[str, Any], *, max_seq_len: int, max_turns: int, greedy: bool
) -> TokenPolicy:
    """The TokenPolicy every sample copies: the options in ``chosen`` that are not None, else
    the generation's own (when it is a TokenPolicy), else the defaults."""
    return TokenPolicy(
        WaveSlot(Waves(sampler, 0), -1),
        sampler.renderer,
        max_tokens=int(_default(chosen["max_tokens"], generation, "max_tokens", max_seq_len)),
        max_seq_len=max_seq_len,
        max_turns=max_turns,
        temperature=float(_default(chosen["temperature"], generation, "temperature", 1.0)),
        greedy=greedy,
        top_p=float(_default(chosen["top_p"], generation, "top_p", 1.0)),
        stop=tuple(_default(chosen["stop"], generation, "stop", ())),
        keep_thinking=bool(_default(chosen["keep_thinking"], generation, "keep_thinking", False)),
        name=_default(None, generation, "name", None) or getattr(sampler, "name", None),
    )


async def _run_sample(
    sample: Mapping[str, Any],
    route: Route,
    index: int,
    base: TokenPolicy,
    waves: Waves,
    *,
    seed: int | None,
    max_turns: int,
) -> Trajectory | RolloutError:
    """One sample's episode, its model calls joining the waves."""
    from ..rollouts import arollout_group

    policy = copy.copy(base)
    policy.sampler = WaveSlot(waves, index)
    policy.seed = None if seed is None else seed + 1000 * index
    made: dict[str, Any] = {}

    def make_env(task: Any) -> Any:
        environment = route.make(task)
        made["task_id"] = getattr(environment, "rolloutgym_task_id", None)
        return environment

    try:
        group = await arollout_group(
            route.task_of(sample),
            make_env,
            policy,
            item_id=None,
            seed=None if seed is None else seed + index,
            max_steps=max_turns + 1,  # + the step that tells the env the turns are spent
            metadata={"sample": index, "task_name": sample["task_name"]},
        )
    finally:
        waves.finish()
    if group.errors:
        return group.errors[0]
    trajectory = group.trajectories[0]
    trajectory.metadata["env_id"] = route.env_id
    task = sample.get("task")
    trajectory.metadata["task_id"] = made.get("task_id") or (task if isinstance(task, (str, int)) else None)
    return trajectory


def _assemble(
    samples: list[Mapping[str, Any]],
    plan: list[Route],
    results: list[Trajectory | RolloutError],
    waves: Waves,
    sampler: BatchSampler,
    started: float,
) -> tuple[RolloutBatch, dict[str, Any]]:
    """The RolloutBatch in sample order (columns padded with the sampler's pad token) and its metrics."""
    pad = getattr(sampler, "pad_token_id", None)
    pad_token_id = pad if isinstance(pad, int) else 0
    columns = batch_columns(results, env_ids=[route.env_id for route in plan], pad_token_id=pad_token_id)
    if any("extra_env_info" in sample for sample in samples):
        pairs = zip(samples, results, strict=True)
        columns["extra_env_info"] = [_last_env_info(sample, result) for sample, result in pairs]
    metrics = batch_metrics(
        results,
        [str(sample["task_name"]) for sample in samples],
        waves=waves.sizes,
        generation_seconds=waves.seconds,
        wall_seconds=time.perf_counter() - started,
    )
    rolled = RolloutBatch(
        tuple(samples),
        tuple(result if isinstance(result, Trajectory) else None for result in results),
        tuple(result if isinstance(result, RolloutError) else None for result in results),
        columns,
        metrics,
        pad_token_id,
    )
    return rolled, metrics


def _last_env_info(sample: Mapping[str, Any], result: Any) -> Any:
    """The env's last ``extra_env_info`` (as the seed returns it in the final state), else the sample's own."""
    if isinstance(result, Trajectory):
        for step in reversed(result.steps):
            if "extra_env_info" in step.info:
                return step.info["extra_env_info"]
    return sample.get("extra_env_info")


def run_multi_turn_rollout(
    generation: Any,
    batch: Any,
    task_to_env: Mapping[str, TaskEnv],
    *,
    max_seq_len: int,
    max_rollout_turns: int = DEFAULT_MAX_ROLLOUT_TURNS,
    greedy: bool = False,
    **options: Any,
) -> tuple[RolloutBatch, dict[str, Any]]:
    """The synchronous twin of :func:`arun_multi_turn_rollout` (same arguments and result).

    Runs its own event loop; inside a running loop, ``await arun_multi_turn_rollout(...)``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            arun_multi_turn_rollout(
                generation,
                batch,
                task_to_env,
                max_seq_len=max_seq_len,
                max_rollout_turns=max_rollout_turns,
                greedy=greedy,
                **options,
            )
        )
    raise RuntimeError(
        "run_multi_turn_rollout() was called inside a running event loop; use 'await arun_multi_turn_rollout(...)'"
    )
