"""tinker-cookbook RL on rolloutgym envs: ``RLDataset`` -> ``EnvGroupBuilder`` -> ``Env``.

A cookbook RL config names a rolloutgym env id::

    from tinker_cookbook.rl import train
    from rolloutgym_tinker.cookbook_rl import RolloutGymDatasetBuilder

    config = train.Config(
        dataset_builder=RolloutGymDatasetBuilder(
            env_id="toy/guess-v0", model_name_for_tokenizer="Qwen/Qwen3-8B", renderer_name="qwen3",
            batch_size=8, group_size=4),
        model_name="Qwen/Qwen3-8B", log_path="/tmp/guess-rl", ...)

How an episode runs: :class:`RolloutGymEnv` plays the env with rolloutgym's own LLM loop
(:class:`rolloutgym.llm.TokenPolicy` over :class:`~rolloutgym_tinker.CookbookRenderer`), in
a background task whose *sampler* is the cookbook: each time the loop asks for a sample,
the prompt it built becomes the cookbook's observation, and the cookbook's action tokens
become the sample. So rendering, tool-call parsing, invalid actions, env stop strings,
turn budgets and failure handling are exactly those of ``rolloutgym run``, and every
observation extends the previous observation and action (the cookbook then builds one
training datum per episode). Step rewards are 0; the env's Score is the group reward
(:meth:`RolloutGymEnvGroupBuilder.compute_group_rewards`), its components the metrics.

Builders hold strings only (env id, task id, renderer and tokenizer names), so they pickle
as the cookbook requires; the renderer is built in :meth:`~RolloutGymEnvGroupBuilder.make_envs`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import chz
import tinker
from rolloutgym.llm import Sample, SamplingParams, TokenPolicy
from rolloutgym_protocol import Score
from tinker_cookbook import renderers
from tinker_cookbook.rl.types import (
    Env,
    EnvGroupBuilder,
    Metrics,
    RLDataset,
    RLDatasetBuilder,
    StepResult,
    Trajectory,
)
from tinker_cookbook.tokenizer_utils import get_tokenizer

from .renderer import CookbookRenderer

__all__ = [
    "RolloutGymDatasetBuilder",
    "RolloutGymEnv",
    "RolloutGymEnvGroupBuilder",
    "RolloutGymRLDataset",
    "builders_for_split",
]


class _CookbookSampler:
    """The sampler of the background loop: hands each prompt to the cookbook and waits for its action."""

    def __init__(self) -> None:
        self.requests: asyncio.Queue[tuple[list[int], SamplingParams, asyncio.Future[Sample]]] = asyncio.Queue()

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        future: asyncio.Future[Sample] = asyncio.get_running_loop().create_future()
        await self.requests.put((list(prompt_token_ids), params, future))
        return await future


class RolloutGymEnv(Env):
    """One episode of a rolloutgym env task, as a tinker-cookbook ``Env`` (single use).

    Attributes:
        score: the env's Score once the episode has ended.
        trajectory: the rolloutgym trajectory (tokens, actions, infos) once it has ended.
        error: ``"Type: message"`` when the episode failed (its reward is then 0).
    """

    def __init__(
        self,
        env_id: str,
        task_id: str,
        renderer: Any,
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        max_turns: int | None = None,
        seed: int | None = 0,
    ) -> None:
        self.env_id = env_id
        self.task_id = task_id
        self.renderer = renderer
        self.adapter = CookbookRenderer(renderer)
        self.env_kwargs = dict(env_kwargs or {})
        self.max_turns = max_turns
        self.seed = seed
        self.score: Score | None = None
        self.trajectory: Any = None
        self.error: str | None = None
        self._sampler = _CookbookSampler()
        self._episode: asyncio.Task[Any] | None = None
        self._pending: asyncio.Future[Sample] | None = None

    @property
    def stop_condition(self) -> list[Any]:
        return list(self.renderer.get_stop_sequences())

    async def _play(self) -> None:
        import rolloutgym as rg

        registry = rg.get_registry()
        spec = registry.resolve_env(self.env_id).spec
        policy = TokenPolicy(
            self._sampler,
            self.adapter,
            max_turns=self.max_turns,
            stop=self.adapter.stop_strings,
            name="tinker-cookbook",
        )
        environment = registry.make_async(spec.id, task=self.task_id, **self.env_kwargs)
        try:
            self.trajectory = await rg.arollout(
                environment, policy, seed=self.seed, max_steps=spec.max_steps, timeout=spec.timeout
            )
            self.score = self.trajectory.score
        except Exception as exc:  # a failed episode is data: reward 0, the error in the metrics
            self.error = f"{type(exc).__name__}: {exc}"
            self.score = Score(0.0, feedback=self.error)
        finally:
            close = getattr(environment, "close", None)
            if close is not None:
                result = close()
                if asyncio.iscoroutine(result):
                    await result

    async def _next_observation(self) -> tinker.ModelInput | None:
        """The next prompt the loop wants sampled, or None when the episode has ended."""
        assert self._episode is not None
        request = asyncio.ensure_future(self._sampler.requests.get())
        done, _ = await asyncio.wait({request, self._episode}, return_when=asyncio.FIRST_COMPLETED)
        if request in done:
            prompt, _params, self._pending = request.result()
            return tinker.ModelInput.from_ints(prompt)
        request.cancel()
        return None

    async def initial_observation(self) -> tuple[tinker.ModelInput, list[Any]]:
        self._episode = asyncio.ensure_future(self._play())
        observation = await self._next_observation()
        if observation is None:
            raise RuntimeError(f"{self.env_id} task {self.task_id} ended before its first prompt: {self.error}")
        return observation, self.stop_condition

    async def step(self, action: list[int], *, extra: Mapping[str, Any] | None = None) -> StepResult:
        if self._pending is None:
            raise RuntimeError("step() before initial_observation(), or after the episode ended")
        if self._pending.done():  # the episode was cancelled while waiting for this action
            self._pending = None
            return StepResult(0.0, True, tinker.ModelInput.empty(), self.stop_condition, metrics=self.metrics())
        stop_reason = str((extra or {}).get("stop_reason") or "stop")
        self._pending.set_result(
            Sample(
                tuple(int(token) for token in action),
                None,
                stop_reason if stop_reason in ("stop", "length") else "stop",
            )
        )
        self._pending = None
        observation = await self._next_observation()
        if observation is not None:
            return StepResult(0.0, False, observation, self.stop_condition)
        return StepResult(0.0, True, tinker.ModelInput.empty(), self.stop_condition, metrics=self.metrics())

    def metrics(self) -> Metrics:
        """The Score's components (``rolloutgym/<name>``), pass (score >= 1) and error flags."""
        score = self.score or Score(0.0)
        values: Metrics = {
            "rolloutgym/pass": float(score.value >= 1.0),
            "rolloutgym/error": float(self.error is not None),
        }
        for name, component in score.components.items():
            values[f"rolloutgym/{name}"] = float(component.value)
        if self.trajectory is not None and self.trajectory.steps:
            values["rolloutgym/invalid_actions"] = float(
                self.trajectory.steps[-1].policy_info.get("invalid_action_count", 0) or 0
            )
        return values

    async def aclose(self) -> None:
        if self._episode is not None and not self._episode.done():
            self._episode.cancel()
            await asyncio.gather(self._episode, return_exceptions=True)


@dataclass(frozen=True)
class RolloutGymEnvGroupBuilder(EnvGroupBuilder):
    """``group_size`` episodes of one task; picklable (strings only).

    Args:
        env_id / task_id: the registered env and one of its task ids.
        group_size: episodes in the group (GRPO centres rewards across it).
        renderer_name: a tinker-cookbook renderer (``qwen3``, ``llama3``, ``role_colon``...).
        model_name: the tokenizer to load (``tinker_cookbook.tokenizer_utils.get_tokenizer``:
            a hub name or a local folder).
        env_kwargs: keyword arguments for the env factory.
        max_turns: assistant turns per episode.
    """

    env_id: str
    task_id: str
    group_size: int
    renderer_name: str
    model_name: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_turns: int | None = None

    def renderer(self) -> Any:
        return renderers.get_renderer(self.renderer_name, get_tokenizer(self.model_name), model_name=self.model_name)

    async def make_envs(self) -> Sequence[Env]:
        renderer = self.renderer()
        return [
            RolloutGymEnv(
                self.env_id, self.task_id, renderer, env_kwargs=self.env_kwargs, max_turns=self.max_turns, seed=member
            )
            for member in range(self.group_size)
        ]

    async def compute_group_rewards(
        self, trajectory_group: list[Trajectory], env_group: Sequence[Env]
    ) -> list[tuple[float, Metrics]]:
        """The env's own Score per episode (the step rewards are 0), its components as metrics."""
        rewards = []
        for environment in env_group:
            assert isinstance(environment, RolloutGymEnv)
            score = environment.score or Score(0.0)
            rewards.append((float(score.value), environment.metrics()))
        return rewards

    def logging_tags(self) -> list[str]:
        return [self.env_id.split("/", 1)[0], self.env_id]


def builders_for_split(
    env_id: str,
    *,
    split: str | None,
    group_size: int,
    renderer_name: str,
    model_name: str,
    env_kwargs: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
) -> list[RolloutGymEnvGroupBuilder]:
    """One builder per task of ``env_id``'s ``split`` (every task when ``split`` is None)."""
    import rolloutgym as rg

    registry = rg.get_registry()
    spec_id = registry.resolve_env(env_id).spec.id
    dataset = registry.load(spec_id, split=split)
    return [
        RolloutGymEnvGroupBuilder(
            spec_id, dataset.item_id(index), group_size, renderer_name, model_name, dict(env_kwargs or {}), max_turns
        )
        for index in range(len(dataset))
    ]


class RolloutGymRLDataset(RLDataset):
    """Batches of :class:`RolloutGymEnvGroupBuilder`, shuffled once with ``seed``; the last partial batch is dropped."""

    def __init__(self, builders: Sequence[RolloutGymEnvGroupBuilder], batch_size: int, *, seed: int | None = 0) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.builders = list(builders)
        if seed is not None:
            random.Random(seed).shuffle(self.builders)
        self.batch_size = batch_size

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        return self.builders[index * self.batch_size : (index + 1) * self.batch_size]

    def __len__(self) -> int:
        return len(self.builders) // self.batch_size


@chz.chz
class RolloutGymDatasetBuilder(RLDatasetBuilder):
    """A cookbook ``RLDatasetBuilder`` naming a rolloutgym env: train on ``split``, test on ``test_split``."""

    env_id: str
    model_name_for_tokenizer: str
    renderer_name: str
    batch_size: int
    group_size: int
    split: str | None = "train"
    test_split: str | None = "test"
    max_turns: int | None = None
    seed: int = 0

    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        def dataset(split: str | None, batch_size: int) -> RolloutGymRLDataset:
            builders = builders_for_split(
                self.env_id,
                split=split,
                group_size=self.group_size,
                renderer_name=self.renderer_name,
                model_name=self.model_name_for_tokenizer,
                max_turns=self.max_turns,
            )
            return RolloutGymRLDataset(builders, min(batch_size, len(builders)) or 1, seed=self.seed)

        train = dataset(self.split, self.batch_size)
        test = dataset(self.test_split, self.batch_size) if self.test_split else None
        return train, test
