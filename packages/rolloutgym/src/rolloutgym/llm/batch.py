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
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory
from rolloutgym_protocol.errors import ConfigError, PolicyError, TaskNotFound, did_you_mean

from ._seed_rules import DEFAULT_MAX_ROLLOUT_TURNS, check_tokenizer, finish_batch
from .configs import InvalidActionPenaltyConfig, StructuredToolUseConfig
from .environments import interface_factory, is_environment_interface
from .generation import BatchSampler
from .generation_interface import is_generation_interface, seed_batch_sampler
from .renderers import Renderer
from .rollout_batch import RESULT_COLUMNS, RolloutBatch, batch_columns, batch_metrics
from .sampling import Sample, SamplingParams
from .token_policy import TokenPolicy

__all__ = ["arun_multi_turn_rollout", "run_multi_turn_rollout"]

EnvSource = str | Callable[[Any], Any]
"""What ``task_to_env`` maps a task name to: a registered env id, or ``factory(task) -> env``."""


class _Waves:
    """Collects the sampling requests of active samples and sends each wave in one call."""

    def __init__(self, sampler: BatchSampler, active: int) -> None:
        self.sampler = sampler
        self.active = active
        self.pending: list[tuple[int, tuple[int, ...], SamplingParams, asyncio.Future[Sample]]] = []
        self.sizes: list[int] = []
        self.seconds = 0.0
        self.failure: PolicyError | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._coroutine = inspect.iscoroutinefunction(getattr(sampler, "generate", None))

    async def request(self, index: int, prompt: Sequence[int], params: SamplingParams) -> Sample:
        if self.failure is not None:
            raise self.failure
        future: asyncio.Future[Sample] = asyncio.get_running_loop().create_future()
        self.pending.append((index, tuple(prompt), params, future))
        self._flush_if_complete()
        return await future

    def finish(self) -> None:
        """A sample left the batch (finished or failed)."""
        self.active -= 1
        self._flush_if_complete()

    def _flush_if_complete(self) -> None:
        if self.pending and len(self.pending) >= self.active:
            items = sorted(self.pending, key=itemgetter(0))
            self.pending = []
            task = asyncio.get_running_loop().create_task(self._generate(items))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _call(self, prompts: list[tuple[int, ...]], params: list[SamplingParams]) -> Any:
        if self._coroutine:
            return await self.sampler.generate(prompts, params)
        result = await asyncio.to_thread(self.sampler.generate, prompts, params)
        return await result if inspect.isawaitable(result) else result

    async def _generate(self, items: list[tuple[int, tuple[int, ...], SamplingParams, asyncio.Future[Sample]]]) -> None:
        wave = len(self.sizes)
        self.sizes.append(len(items))
        prompts = [item[1] for item in items]
        params = [item[2] for item in items]
        started = time.perf_counter()
        try:
            samples = list(await self._call(prompts, params))
            if len(samples) != len(items):
                raise PolicyError(f"generate() returned {len(samples)} samples for {len(items)} prompts")
            for sample in samples:
                if not isinstance(sample, Sample):
                    raise PolicyError(
                        f"generate() must return rolloutgym.llm.Sample objects, got {type(sample).__name__}"
                    )
        except Exception as exc:
            name = type(self.sampler).__name__
            self.failure = PolicyError(
                f"the generation backend {name} failed in wave {wave} ({len(items)} prompts): "
                f"{type(exc).__name__}: {exc}"
            )
            self.failure.__cause__ = exc
            for *_, future in items:
                if not future.done():
                    future.set_exception(self.failure)
            return
        finally:
            self.seconds += time.perf_counter() - started
        for (*_, future), sample in zip(items, samples, strict=True):
            if not future.done():
                future.set_result(sample)


class _FreeRunning(_Waves):
    """Each sample's turn is sent on its own as soon as it is ready (no wave barrier).

    A coroutine backend gets the requests concurrently (continuous batching is its job);
    a plain method runs one request at a time in a worker thread.
    """

    def __init__(self, sampler: BatchSampler, active: int) -> None:
        super().__init__(sampler, active)
        self._lock = asyncio.Lock()

    async def request(self, index: int, prompt: Sequence[int], params: SamplingParams) -> Sample:
        if self.failure is not None:
            raise self.failure
        future: asyncio.Future[Sample] = asyncio.get_running_loop().create_future()
        if self._coroutine:
            await self._generate([(index, tuple(prompt), params, future)])
        else:
            async with self._lock:
                await self._generate([(index, tuple(prompt), params, future)])
        return await future

    def finish(self) -> None:
        self.active -= 1


class _WaveSlot:
    """The per-request :class:`Sampler` one sample's episode sees: a seat in the waves."""

    __slots__ = ("index", "waves")

    def __init__(self, waves: _Waves, index: int) -> None:
        self.waves = waves
        self.index = index

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        return await self.waves.request(self.index, prompt_token_ids, params)


class _Route:
    """How to build the environment of one task name."""

    def __init__(self, task_name: str, source: Any, registry: Any) -> None:
        self.task_name = task_name
        self.registry = registry
        self.env_id: str | None = None
        self.factory: Callable[[Any], Any] | None = None
        self.has_tasks = False
        self.batched = is_environment_interface(source)
        if self.batched:  # a NeMo-style batched env: each sample's message_log is its episode
            self.factory = interface_factory(source)
        elif isinstance(source, str):
            spec = registry.resolve_env(source).spec  # EnvNotFound names the installed ones
            self.env_id, self.has_tasks = spec.id, spec.tasks is not None
        elif callable(source):
            self.factory = source
        else:
            raise ConfigError(
                f"task_to_env[{task_name!r}] must be a registered env id (e.g. 'sql/shop-v0'), a "
                f"factory(task) -> env or a batched EnvironmentInterface, got {type(source).__name__}"
            )

    def task_of(self, sample: Mapping[str, Any]) -> Any:
        """What the env is made from: the sample itself for a batched env, else its ``task``."""
        return sample if self.batched else sample["task"]

    def check(self, task: Any, index: int) -> None:
        if self.env_id is None or not self.has_tasks:
            return
        try:
            self.registry.resolve_task(self.env_id, task)
        except (TaskNotFound, TypeError) as exc:
            raise TaskNotFound(f"sample {index} (task_name {self.task_name!r}): {exc}") from None

    def make(self, task: Any) -> Any:
        if self.factory is not None:
            return self.factory(task)
        return self.registry.make(self.env_id, task=task)


def _samples(batch: Any) -> list[Mapping[str, Any]]:
    if isinstance(batch, Mapping):  # columns, like a BatchedDataDict
        lengths = {key: len(values) for key, values in batch.items()}
        if len(set(lengths.values())) > 1:
            raise ConfigError(f"batch columns have different lengths: {lengths}")
        count = next(iter(lengths.values()), 0)
        return [{key: values[index] for key, values in batch.items()} for index in range(count)]
    try:
        rows = list(batch)
    except TypeError:
        raise ConfigError(
            f"batch must be a list of sample dicts, a datasets.Dataset or a dict of columns, got {type(batch).__name__}"
        ) from None
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ConfigError(
                f"sample {index} is a {type(row).__name__}; each sample must be a dict with 'task_name' and 'task'"
            )
    return rows


def _plan(samples: Sequence[Mapping[str, Any]], task_to_env: Mapping[str, EnvSource], registry: Any) -> list[_Route]:
    if not isinstance(task_to_env, Mapping) or not task_to_env:
        raise ConfigError("task_to_env must map task names to env ids or env factories, e.g. {'sql': 'sql/shop-v0'}")
    routes = {name: _Route(name, source, registry) for name, source in task_to_env.items()}
    known = sorted(routes)
    plan = []
    for index, sample in enumerate(samples):
        clashes = sorted(set(sample) & set(RESULT_COLUMNS))
        if clashes:
            raise ConfigError(
                f"sample {index} has field(s) {', '.join(clashes)}, which the rollout writes; rename them"
            )
        name = sample.get("task_name")
        wanted = ("task_name",) if getattr(routes.get(name), "batched", False) else ("task_name", "task")
        missing = [key for key in wanted if key not in sample]
        if missing:
            raise ConfigError(f"sample {index} has no {' or '.join(repr(key) for key in missing)} field")
        if name not in routes:
            raise ConfigError(
                f"sample {index} has task_name {name!r}, which task_to_env does not map."
                f"{did_you_mean(str(name), known)} "
                f"Known task names: {', '.join(known)}."
            )
        routes[name].check(routes[name].task_of(sample), index)
        plan.append(routes[name])
    return plan


def _default(value: Any, generation: Any, attribute: str, fallback: Any) -> Any:
    if value is not None:
        return value
    if isinstance(generation, TokenPolicy):
        return getattr(generation, attribute)
    return fallback


async def arun_multi_turn_rollout(
    generation: Any,
    batch: Any,
    task_to_env: Mapping[str, EnvSource],
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
    waves = (_FreeRunning if free_running else _Waves)(sampler, len(samples))
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
    task_to_env: Mapping[str, EnvSource],
    renderer: Renderer | None,
    registry: Any,
    tokenizer: Any = None,
) -> tuple[BatchSampler, list[Mapping[str, Any]], list[_Route]]:
    """The batch sampler, the samples and each sample's route (everything checked before generating).

    A NeMo-style generation (``generate(data, greedy)``) renders with ``tokenizer`` unless ``renderer`` is given.
    """
    if renderer is None and is_generation_interface(generation):
        renderer = tokenizer
    sampler = seed_batch_sampler(generation, renderer)
    if registry is None:
        from ..registry import get_registry

        registry = get_registry()
    samples = _samples(batch)
    return sampler, samples, _plan(samples, task_to_env, registry)


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
        _WaveSlot(_Waves(sampler, 0), -1),
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
    route: _Route,
    index: int,
    base: TokenPolicy,
    waves: _Waves,
    *,
    seed: int | None,
    max_turns: int,
) -> Trajectory | RolloutError:
    """One sample's episode, its model calls joining the waves."""
    from ..rollouts import arollout_group

    policy = copy.copy(base)
    policy.sampler = _WaveSlot(waves, index)
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
    plan: list[_Route],
    results: list[Trajectory | RolloutError],
    waves: _Waves,
    sampler: BatchSampler,
    started: float,
) -> tuple[RolloutBatch, dict[str, Any]]:
    """The RolloutBatch in sample order (columns padded with the sampler's pad token) and its metrics."""
    pad = getattr(sampler, "pad_token_id", None)
    pad_token_id = pad if isinstance(pad, int) else 0
    columns = batch_columns(results, env_ids=[route.env_id for route in plan], pad_token_id=pad_token_id)
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


def run_multi_turn_rollout(
    generation: Any,
    batch: Any,
    task_to_env: Mapping[str, EnvSource],
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
