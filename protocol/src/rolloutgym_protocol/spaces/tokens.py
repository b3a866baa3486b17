"""Token spaces: one token id, or a sequence of them (Gymnasium ``Discrete``/``Sequence``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

__all__ = ["id", "sequence"]


def id(vocab_size: int, *, start: int = 0, seed: int | np.random.Generator | None = None) -> gym.spaces.Discrete:  # noqa: A001
    """A single token id in ``[start, start + vocab_size)``."""
    if vocab_size <= 0:
        raise ValueError("vocab_size must be positive")
    return gym.spaces.Discrete(vocab_size, start=start, seed=seed)


def sequence(
    vocab_size: int, *, start: int = 0, stack: bool = False, seed: int | np.random.Generator | None = None
) -> gym.spaces.Sequence:
    """A variable-length sequence of token ids (tuples are members, as in Gymnasium)."""
    return gym.spaces.Sequence(id(vocab_size, start=start), stack=stack, seed=seed)
