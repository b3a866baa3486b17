"""A Gymnasium space whose members are the values a pydantic type accepts (strictly)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import gymnasium as gym
import numpy as np
from pydantic import TypeAdapter, ValidationError

__all__ = ["PydanticSpace"]

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter_for(annotation: Any) -> TypeAdapter[Any]:
    """Building a TypeAdapter costs milliseconds; spaces of the same type share one."""
    try:
        adapter = _ADAPTERS.get(annotation)
    except TypeError:  # unhashable annotation
        return TypeAdapter(annotation)
    if adapter is None:
        adapter = _ADAPTERS[annotation] = TypeAdapter(annotation)
    return adapter


T = TypeVar("T")


class PydanticSpace(gym.Space[T], Generic[T]):
    """Membership is strict pydantic validation of ``annotation`` (never coerces)."""

    def __init__(
        self,
        annotation: Any,
        *,
        sampler: Callable[[np.random.Generator], Any] | None = None,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self.annotation = annotation
        self._adapter: TypeAdapter[Any] = _adapter_for(annotation)
        self._sampler = sampler
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def validate(self, value: Any) -> Any:
        """Validate ``value`` strictly; raises ``pydantic.ValidationError``."""
        return self._adapter.validate_python(value, strict=True)

    def contains(self, x: Any) -> bool:
        try:
            self.validate(x)
        except (ValidationError, TypeError, ValueError):
            return False
        return self._extra_checks(x)

    def _extra_checks(self, value: Any) -> bool:
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None or probability is not None:
            raise NotImplementedError(f"{type(self).__name__} does not support masked sampling")
        if self._sampler is None:
            raise NotImplementedError(f"{type(self).__name__} has no sampler")
        value = self._sampler(self.np_random)
        self.validate(value)
        return value

    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        return [self._adapter.dump_python(value, mode="json") for value in sample_n]

    def from_jsonable(self, sample_n: list[Any]) -> list[Any]:
        return [self.validate(value) for value in sample_n]

    def __repr__(self) -> str:
        name = getattr(self.annotation, "__name__", repr(self.annotation))
        return f"PydanticSpace({name})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.annotation == self.annotation  # type: ignore[attr-defined]
