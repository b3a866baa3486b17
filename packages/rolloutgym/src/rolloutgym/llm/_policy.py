"""The scaffolding :class:`TokenPolicy` and :class:`ChatPolicy` share, written once.

An LLM policy is env-aware: the engine calls ``policy.for_env(env)`` once per episode and
then calls the returned episode object with each observation. Both policies validate the
same sampling options, number their episodes (for per-turn seeds), refuse to be called
without an env, and run their async ``act`` from a sync ``rollout()`` as well.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

from rolloutgym_protocol.errors import ConfigError, PolicyError

from ._episode import LLMEpisodeBase, call_maybe_sync

__all__ = ["LLMEpisode", "LLMPolicy"]


class LLMEpisode(LLMEpisodeBase):
    """One episode of an :class:`LLMPolicy`; subclasses implement ``async act(observation)``."""

    def __init__(self, policy: LLMPolicy, environment: Any, index: int) -> None:
        super().__init__(environment, max_turns=policy.max_turns)
        self.policy = policy
        self.index = index

    def __call__(self, observation: Any) -> Any:
        return call_maybe_sync(self.act(observation))

    def fork(self, environment: Any) -> LLMEpisode:
        """A copy of this episode so far (context, conversation, counters) that plays on ``environment``.

        Branching rollouts continue a trunk's conversation in each branch with it. The copy gets
        its own episode number, so seeded sampling differs between branches.
        """
        clone = copy.copy(self)
        for name, value in self.__dict__.items():
            if isinstance(value, (list, dict, set)) and name != "tools":
                clone.__dict__[name] = copy.deepcopy(value)
        clone.environment = environment
        clone.index = self.policy._episodes
        self.policy._episodes += 1
        return clone

    async def act(self, observation: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def turn_seed(self) -> int | None:
        """The sampling seed of this turn: ``seed + 1000 * episode + turn`` (``None`` without a seed)."""
        seed = self.policy.seed
        return None if seed is None else seed + 1000 * self.index + self.turn


class LLMPolicy:
    """Sampling options and one :attr:`episode_type` object per episode (see the module docstring)."""

    episode_type: ClassVar[type[LLMEpisode]]

    def __init__(
        self,
        *,
        max_tokens: int,
        max_turns: int | None = None,
        temperature: float = 1.0,
        greedy: bool = False,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
        keep_thinking: bool = False,
        name: str | None = None,
    ) -> None:
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
        if max_turns is not None and max_turns < 1:
            raise ConfigError(f"max_turns must be at least 1, got {max_turns}")
        if temperature < 0:
            raise ConfigError(f"temperature must be non-negative, got {temperature}")
        self.max_tokens = int(max_tokens)
        self.max_turns = max_turns
        self.temperature = 0.0 if greedy else float(temperature)
        self.top_p = float(top_p)
        self.stop = tuple(stop)
        self.seed = seed
        self.keep_thinking = keep_thinking
        self.name = name
        self._episodes = 0

    def for_env(self, environment: Any) -> LLMEpisode:
        """The callable for one episode of ``environment`` (the engine calls this)."""
        episode = self.episode_type(self, environment, self._episodes)
        self._episodes += 1
        return episode

    def __call__(self, observation: Any) -> Any:
        raise PolicyError(
            "an LLM policy needs its environment: run it through rollout()/arollout() (they call for_env)"
        )
