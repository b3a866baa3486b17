"""Chat spaces: one message, or a list of messages (plain dicts, validated by pydantic)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from ..types import Message
from ._pydantic import PydanticSpace
from .text import text

__all__ = ["ChatSpace", "MessageSpace", "chat", "message"]

DEFAULT_ROLES = ("system", "user", "assistant", "tool")


class MessageSpace(PydanticSpace):
    """A chat message whose role is in ``roles`` and whose string content is in ``content_space``."""

    def __init__(
        self,
        *,
        roles: Sequence[str] = DEFAULT_ROLES,
        content_space: gym.Space[Any] | None = None,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        roles = tuple(roles)
        if not roles:
            raise ValueError("roles must be non-empty")
        for role in roles:
            if not isinstance(role, str) or not role:
                raise ValueError("each role must be a non-empty str")
        self.roles = roles
        self.content_space = content_space if content_space is not None else text()
        super().__init__(Message, sampler=self._sample_message, seed=seed)

    def _extra_checks(self, value: Any) -> bool:
        if value["role"] not in self.roles:
            return False
        content = value["content"]
        return not isinstance(content, str) or self.content_space.contains(content)

    def _sample_message(self, generator: np.random.Generator) -> dict[str, Any]:
        role = self.roles[int(generator.integers(0, len(self.roles)))]
        return {"role": role, "content": self.content_space.sample()}

    def seed(self, seed: int | None = None) -> list[int]:  # type: ignore[override]
        seeds = [int(value) for value in np.atleast_1d(super().seed(seed))]
        child = int(self.np_random.bit_generator.state["state"]["state"] % (2**31))
        self.content_space.seed(child)
        return [seeds[0], child]

    def __repr__(self) -> str:
        return f"MessageSpace(roles={self.roles!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MessageSpace) and other.roles == self.roles and other.content_space == self.content_space
        )


class ChatSpace(gym.Space[list[Any]]):
    """A list (not a tuple) of messages, each in ``message_space``, within length bounds."""

    def __init__(
        self,
        message_space: MessageSpace | None = None,
        *,
        min_length: int = 0,
        max_length: int | None = None,
        sample_max_length: int = 8,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if min_length < 0:
            raise ValueError("min_length must be non-negative")
        if max_length is not None and max_length < min_length:
            raise ValueError("max_length must be >= min_length")
        if sample_max_length < min_length:
            raise ValueError("sample_max_length must be >= min_length")
        self.message_space = message_space if message_space is not None else MessageSpace()
        self.min_length = min_length
        self.max_length = max_length
        self.sample_max_length = sample_max_length if max_length is None else min(sample_max_length, max_length)
        super().__init__(shape=None, dtype=None, seed=seed)
        if seed is not None:
            self.seed(seed if isinstance(seed, int) else None)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def seed(self, seed: int | None = None) -> list[int]:  # type: ignore[override]
        seeds = [int(value) for value in np.atleast_1d(super().seed(seed))]
        child = int(self.np_random.integers(0, 2**31 - 1))
        return [seeds[0], *self.message_space.seed(child)]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, list):
            return False
        if len(x) < self.min_length or (self.max_length is not None and len(x) > self.max_length):
            return False
        return all(self.message_space.contains(item) for item in x)

    def sample(self, mask: Any = None, probability: Any = None) -> list[Any]:
        if mask is not None or probability is not None:
            raise NotImplementedError("ChatSpace does not support masked sampling")
        length = int(self.np_random.integers(self.min_length, self.sample_max_length + 1))
        return [self.message_space.sample() for _ in range(length)]

    def to_jsonable(self, sample_n: Sequence[list[Any]]) -> list[Any]:
        return [self.message_space.to_jsonable(chat_value) for chat_value in sample_n]

    def from_jsonable(self, sample_n: list[Any]) -> list[list[Any]]:
        return [self.message_space.from_jsonable(chat_value) for chat_value in sample_n]

    def __repr__(self) -> str:
        return f"ChatSpace(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ChatSpace)
            and other.message_space == self.message_space
            and (other.min_length, other.max_length) == (self.min_length, self.max_length)
        )


def message(
    *,
    roles: Sequence[str] = DEFAULT_ROLES,
    content_space: gym.Space[Any] | None = None,
    seed: int | np.random.Generator | None = None,
) -> MessageSpace:
    """A :class:`MessageSpace`."""
    return MessageSpace(roles=roles, content_space=content_space, seed=seed)


def chat(
    message_space: MessageSpace | None = None,
    *,
    min_length: int = 0,
    max_length: int | None = None,
    sample_max_length: int = 8,
    seed: int | np.random.Generator | None = None,
) -> ChatSpace:
    """A :class:`ChatSpace`."""
    return ChatSpace(
        message_space,
        min_length=min_length,
        max_length=max_length,
        sample_max_length=sample_max_length,
        seed=seed,
    )
