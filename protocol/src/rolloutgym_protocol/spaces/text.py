"""Text spaces: any Unicode string within length bounds."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["DEFAULT_ALPHABET", "TextSpace", "text"]

DEFAULT_ALPHABET = string.ascii_letters + string.digits + " .,!?-_\n"


class TextSpace(gym.Space[str]):
    """All ``str`` values with ``min_length <= len(value) <= max_length``.

    ``sample_alphabet`` only controls random sampling; membership accepts any Unicode.
    """

    def __init__(
        self,
        *,
        min_length: int = 0,
        max_length: int | None = None,
        sample_max_length: int = 32,
        sample_alphabet: str = DEFAULT_ALPHABET,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if min_length < 0:
            raise ValueError("min_length must be non-negative")
        if max_length is not None and max_length < min_length:
            raise ValueError("max_length must be >= min_length")
        if sample_max_length < min_length:
            raise ValueError("sample_max_length must be >= min_length")
        if not sample_alphabet:
            raise ValueError("sample_alphabet must be non-empty")
        self.min_length = min_length
        self.max_length = max_length
        self.sample_max_length = sample_max_length if max_length is None else min(sample_max_length, max_length)
        self.sample_alphabet = sample_alphabet
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str):
            return False
        if len(x) < self.min_length:
            return False
        return self.max_length is None or len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise NotImplementedError("TextSpace does not support masked sampling")
        length = int(self.np_random.integers(self.min_length, self.sample_max_length + 1))
        indices = self.np_random.integers(0, len(self.sample_alphabet), size=length)
        return "".join(self.sample_alphabet[int(i)] for i in indices)

    def to_jsonable(self, sample_n: Sequence[str]) -> list[str]:
        return list(sample_n)

    def from_jsonable(self, sample_n: list[str]) -> list[str]:
        return list(sample_n)

    def __repr__(self) -> str:
        return f"TextSpace(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TextSpace) and other.min_length == self.min_length and other.max_length == self.max_length
        )


def text(
    *,
    min_length: int = 0,
    max_length: int | None = None,
    sample_max_length: int = 32,
    sample_alphabet: str = DEFAULT_ALPHABET,
    seed: int | np.random.Generator | None = None,
) -> TextSpace:
    """A :class:`TextSpace`."""
    return TextSpace(
        min_length=min_length,
        max_length=max_length,
        sample_max_length=sample_max_length,
        sample_alphabet=sample_alphabet,
        seed=seed,
    )
