"""Export a space as the JSON schema a model's tool definition needs."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from .text import TextSpace

__all__ = ["to_json_schema"]


def to_json_schema(space: gym.Space[Any]) -> dict[str, Any]:
    """Return a JSON schema describing the members of ``space``.

    Supports ``TextSpace``/``gym.spaces.Text`` (string), ``Discrete`` (integer range),
    scalar ``Box`` (number), ``MultiBinary``, ``Dict`` (object, every key required, no
    extras), ``Sequence`` and ``Tuple`` (arrays), and anything with a ``json_schema()``
    method (e.g. :class:`~rolloutgym_protocol.spaces.tools.ToolCallSpace`).
    """
    custom = getattr(space, "json_schema", None)
    if callable(custom):
        return custom()
    if isinstance(space, TextSpace):
        schema: dict[str, Any] = {"type": "string"}
        if space.min_length:
            schema["minLength"] = space.min_length
        if space.max_length is not None:
            schema["maxLength"] = space.max_length
        return schema
    if isinstance(space, gym.spaces.Text):
        return {"type": "string", "minLength": space.min_length, "maxLength": space.max_length}
    if isinstance(space, gym.spaces.Discrete):
        start = int(space.start)
        return {"type": "integer", "minimum": start, "maximum": start + int(space.n) - 1}
    if isinstance(space, gym.spaces.Box):
        item: dict[str, Any] = {"type": "integer" if np.issubdtype(space.dtype, np.integer) else "number"}
        low, high = np.asarray(space.low).ravel(), np.asarray(space.high).ravel()
        if low.size and np.all(low == low[0]) and np.isfinite(low[0]):
            item["minimum"] = low[0].item()
        if high.size and np.all(high == high[0]) and np.isfinite(high[0]):
            item["maximum"] = high[0].item()
        if space.shape == ():
            return item
        size = int(np.prod(space.shape))
        return {"type": "array", "items": item, "minItems": size, "maxItems": size}
    if isinstance(space, gym.spaces.MultiBinary):
        size = int(np.prod(space.shape))
        return {"type": "array", "items": {"type": "integer", "enum": [0, 1]}, "minItems": size, "maxItems": size}
    if isinstance(space, gym.spaces.Dict):
        return {
            "type": "object",
            "properties": {key: to_json_schema(child) for key, child in space.spaces.items()},
            "required": list(space.spaces),
            "additionalProperties": False,
        }
    if isinstance(space, gym.spaces.Sequence):
        return {"type": "array", "items": to_json_schema(space.feature_space)}
    if isinstance(space, gym.spaces.Tuple):
        return {
            "type": "array",
            "prefixItems": [to_json_schema(child) for child in space.spaces],
            "minItems": len(space.spaces),
            "maxItems": len(space.spaces),
        }
    raise TypeError(f"cannot export {type(space).__name__} as a JSON schema; give the space a json_schema() method")
