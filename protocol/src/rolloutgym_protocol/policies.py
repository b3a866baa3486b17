"""Policy contracts: plain callables that map an observation to an action or a :class:`PolicyOutput`."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

__all__ = ["AsyncPolicy", "EnvAwarePolicy", "Policy", "PolicyOutput"]

ObsT_contra = TypeVar("ObsT_contra", contravariant=True)
ActT_co = TypeVar("ActT_co", covariant=True)
ActionT = TypeVar("ActionT")


@dataclass(frozen=True, slots=True)
class PolicyOutput(Generic[ActionT]):
    """An action plus what the sampler knows about it.

    Sequences are stored as tuples; tuples given by the caller are kept as they are
    (the sampler's own values, not re-converted).

    ``tokens``/``logprobs``/``stop_reason`` are filled from ``info`` when not given
    (``info["tokens"]`` etc.). ``prompt_tokens`` are the tokens appended to the
    model's context before this sample (the observation, loss mask 0).
    """

    action: ActionT
    info: Mapping[str, Any] = field(default_factory=dict)
    tokens: Sequence[int] | None = None
    logprobs: Sequence[float] | None = None
    stop_reason: str | None = None
    prompt_tokens: Sequence[int] | None = None

    def __post_init__(self) -> None:
        info = dict(self.info)
        object.__setattr__(self, "info", info)
        tokens = self.tokens
        if tokens is None:
            candidate = info.get("tokens")
            if isinstance(candidate, Sequence) and not isinstance(candidate, (str, bytes)):
                tokens = candidate
        if tokens is not None and type(tokens) is not tuple:
            object.__setattr__(self, "tokens", tuple(int(token) for token in tokens))
        elif tokens is not None and tokens is not self.tokens:
            object.__setattr__(self, "tokens", tokens)
        logprobs = self.logprobs
        if logprobs is None:
            candidate = info.get("logprobs")
            if isinstance(candidate, Sequence) and not isinstance(candidate, (str, bytes)):
                logprobs = candidate
        if logprobs is not None and type(logprobs) is not tuple:
            object.__setattr__(self, "logprobs", tuple(float(value) for value in logprobs))
        elif logprobs is not None and logprobs is not self.logprobs:
            object.__setattr__(self, "logprobs", logprobs)
        if self.stop_reason is None and isinstance(info.get("stop_reason"), str):
            object.__setattr__(self, "stop_reason", info["stop_reason"])
        if self.prompt_tokens is not None and type(self.prompt_tokens) is not tuple:
            object.__setattr__(self, "prompt_tokens", tuple(int(token) for token in self.prompt_tokens))


class Policy(Protocol[ObsT_contra, ActT_co]):
    """A synchronous policy: ``policy(observation) -> action | PolicyOutput``."""

    def __call__(self, observation: ObsT_contra, /) -> ActT_co | PolicyOutput[Any]: ...


class AsyncPolicy(Protocol[ObsT_contra, ActT_co]):
    """A policy that may also return an awaitable of an action or :class:`PolicyOutput`."""

    def __call__(
        self, observation: ObsT_contra, /
    ) -> ActT_co | PolicyOutput[Any] | Awaitable[ActT_co | PolicyOutput[Any]]: ...


@runtime_checkable
class EnvAwarePolicy(Protocol):
    """A policy that needs the environment (e.g. ``oracle``): the engine calls
    ``for_env(env)`` at the start of each episode and uses the returned callable."""

    def for_env(self, env: Any, /) -> Any: ...
