"""The seeds of a group's members: one per member, or planned lazily in constant memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["member_seeds", "planned_seeds"]


def member_seeds(seed: int | Sequence[int | None] | None, num_rollouts: int) -> list[int | None]:
    """Seeds for each member: an int gives ``seed + i``; a sequence gives one per member."""
    if seed is None:
        return [None] * num_rollouts
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, a sequence of ints, or None")
    if isinstance(seed, int):
        return [seed + index for index in range(num_rollouts)]
    seeds = list(seed)
    if len(seeds) != num_rollouts:
        raise ValueError(f"got {len(seeds)} seeds for {num_rollouts} rollouts; pass one seed per rollout")
    return seeds


class _Unseeded(Sequence[None]):
    """``n`` members without a seed, in constant memory (a run's -n may be large)."""

    __slots__ = ("_size",)

    def __init__(self, size: int) -> None:
        self._size = size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [None] * len(range(self._size)[index])
        range(self._size)[index]  # IndexError past the end, as a list
        return None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Unseeded, (self._size,))


def planned_seeds(base: int | None, num_rollouts: int) -> Sequence[int | None]:
    """The seeds of ``num_rollouts`` members, ``base + i`` (or ``None``), computed when indexed.

    Like :func:`member_seeds` for an int or ``None`` seed, but in constant memory: a run
    plans its work lazily, so ``-n`` does not decide how much memory the plan takes.
    """
    if base is None:
        return _Unseeded(num_rollouts)
    return range(base, base + num_rollouts)
