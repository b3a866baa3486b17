"""JSON encodings of what crosses the wire: spaces, observations, actions, ``info``.

Spaces travel as small JSON descriptions (never pickles: a client must not run code a
server sends, and a client in another language must be able to read them). The spaces
of the protocol and Gymnasium's common spaces round-trip exactly (``==`` holds); any
other space arrives as an :class:`OpaqueSpace` that keeps its name and JSON schema and
accepts every value (the server still validates actions).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from pydantic_core import from_json
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.records import to_jsonable

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - the serve extra brings orjson; without it the json module writes
    _orjson = None  # type: ignore[assignment]

__all__ = [
    "OpaqueSpace",
    "decode_info",
    "decode_space",
    "decode_value",
    "value_decoder",
    "encode_space",
    "encode_value",
    "dumps_fast",
    "dumps_text",
    "loads",
]


def dumps_fast(value: Any) -> bytes | None:
    """JSON of ``value`` written by orjson (~10x the json module), or ``None`` where it could differ.

    Values JSON has (strings, numbers, lists, dicts with string keys, ...) are written as the
    json module writes them, the rest through ``to_jsonable`` (what run files store), with two
    exceptions: a ``uuid.UUID`` is written as its text and a plain ``enum.Enum`` as its value
    (the json path describes them as ``{"$object": ...}``). ``None`` (take the json path) when
    orjson is not installed, refuses the value (integers over 64 bits, keys that are not
    strings, lone surrogates, nesting past 255) or wrote a ``null``: NaN and infinities
    become ``null`` there, where the json module writes ``NaN``.
    """
    if _orjson is None:
        return None
    try:
        data: bytes = _orjson.dumps(value, default=encode_value, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        return None
    return None if b"null" in data else data


def dumps_text(value: Any) -> str:
    """JSON of an answer; values the json module cannot write go through ``to_jsonable`` (what run files store).

    Written by :func:`dumps_fast` where it can, else by the json module.
    """
    data = dumps_fast(value)
    if data is not None:
        return data.decode()
    try:
        return _ENCODER.encode(value)  # json.dumps(value, ensure_ascii=False, separators=..., default=...)
    except (TypeError, ValueError):  # non-string keys and the like: the slow, exact path
        return json.dumps(encode_value(value), ensure_ascii=False, separators=(",", ":"))


def loads(raw: str | bytes) -> Any:
    """``json.loads``, parsed by pydantic-core (Rust) first; what it rejects gets ``json``'s own answer or error.

    (Not orjson: it reads an integer over 64 bits as a float.)
    """
    try:
        return from_json(raw)
    except ValueError:  # lone surrogates, bad JSON: the json module's result, or its usual error message
        return json.loads(raw)


class OpaqueSpace(gym.Space[Any]):
    """A served env's space that has no JSON description: any value is a member here."""

    def __init__(self, name: str, schema: dict[str, Any] | None = None) -> None:
        self.name = name
        self.schema = schema
        super().__init__(shape=None, dtype=None)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return True

    def json_schema(self) -> dict[str, Any]:
        return dict(self.schema or {})

    def __repr__(self) -> str:
        return f"OpaqueSpace({self.name})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueSpace) and (other.name, other.schema) == (self.name, self.schema)


def _bound(value: Any) -> Any:
    array = np.asarray(value)
    return [None if not np.isfinite(item) else item for item in array.astype(float).ravel().tolist()]


def _unbound(values: list[Any], sign: float) -> list[float]:
    return [sign * np.inf if item is None else item for item in values]


def encode_space(space: gym.Space[Any] | None) -> dict[str, Any] | None:
    """A JSON description of ``space`` (``None`` stays ``None``)."""
    if space is None:
        return None
    if isinstance(space, spaces.ChatSpace):
        return {
            "type": "chat",
            "message": encode_space(space.message_space),
            "min_length": space.min_length,
            "max_length": space.max_length,
        }
    if isinstance(space, spaces.ToolCallSpace):
        return {
            "type": "tool_call",
            "tools": {name: encode_space(schema) for name, schema in space.tools.items()},
            "descriptions": space.descriptions,
        }
    if isinstance(space, spaces.MessageSpace):
        return {"type": "message", "roles": list(space.roles), "content": encode_space(space.content_space)}
    if isinstance(space, spaces.TextSpace):
        return {"type": "text", "min_length": space.min_length, "max_length": space.max_length}
    if isinstance(space, gym.spaces.Text):
        return {
            "type": "gym_text",
            "min_length": space.min_length,
            "max_length": space.max_length,
            "charset": "".join(space.character_set),
        }
    if isinstance(space, gym.spaces.Discrete):
        return {"type": "discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, gym.spaces.Box):
        return {
            "type": "box",
            "low": _bound(space.low),
            "high": _bound(space.high),
            "shape": list(space.shape),
            "dtype": str(space.dtype),
        }
    if isinstance(space, gym.spaces.MultiBinary):
        return {"type": "multi_binary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, gym.spaces.MultiDiscrete):
        return {
            "type": "multi_discrete",
            "nvec": space.nvec.tolist(),
            "start": space.start.tolist(),
            "dtype": str(space.dtype),
        }
    if isinstance(space, gym.spaces.Dict):
        return {"type": "dict", "spaces": {key: encode_space(child) for key, child in space.spaces.items()}}
    if isinstance(space, gym.spaces.Tuple):
        return {"type": "tuple", "spaces": [encode_space(child) for child in space.spaces]}
    if isinstance(space, gym.spaces.Sequence):
        return {"type": "sequence", "feature": encode_space(space.feature_space), "stack": space.stack}
    try:
        schema = spaces.to_json_schema(space)
    except TypeError:
        schema = None
    return {"type": "opaque", "name": repr(space), "schema": schema}


def decode_space(data: dict[str, Any] | None) -> gym.Space[Any] | None:
    """The space described by :func:`encode_space` output."""
    if data is None:
        return None
    kind = data.get("type")
    if kind == "chat":
        return spaces.ChatSpace(
            decode_space(data["message"]), min_length=data["min_length"], max_length=data["max_length"]
        )  # type: ignore[arg-type]
    if kind == "tool_call":
        tools = {name: decode_space(schema) for name, schema in data["tools"].items()}
        return spaces.ToolCallSpace(tools, descriptions=data.get("descriptions"))  # type: ignore[arg-type]
    if kind == "message":
        return spaces.MessageSpace(roles=data["roles"], content_space=decode_space(data["content"]))
    if kind == "text":
        return spaces.TextSpace(min_length=data["min_length"], max_length=data["max_length"])
    if kind == "gym_text":
        return gym.spaces.Text(data["max_length"], min_length=data["min_length"], charset=data["charset"])
    if kind == "discrete":
        return gym.spaces.Discrete(data["n"], start=data["start"])
    if kind == "box":
        shape = tuple(data["shape"])
        low = np.asarray(_unbound(data["low"], -1.0), dtype=float).reshape(shape)
        high = np.asarray(_unbound(data["high"], 1.0), dtype=float).reshape(shape)
        return gym.spaces.Box(low=low, high=high, shape=shape, dtype=np.dtype(data["dtype"]))  # type: ignore[arg-type]
    if kind == "multi_binary":
        return gym.spaces.MultiBinary(data["n"])
    if kind == "multi_discrete":
        return gym.spaces.MultiDiscrete(data["nvec"], start=data["start"], dtype=np.dtype(data["dtype"]))  # type: ignore[arg-type]
    if kind == "dict":
        return gym.spaces.Dict({key: decode_space(child) for key, child in data["spaces"].items()})  # type: ignore[misc]
    if kind == "tuple":
        return gym.spaces.Tuple([decode_space(child) for child in data["spaces"]])  # type: ignore[misc]
    if kind == "sequence":
        return gym.spaces.Sequence(decode_space(data["feature"]), stack=data.get("stack", False))  # type: ignore[arg-type]
    return OpaqueSpace(str(data.get("name", kind)), data.get("schema"))


def encode_value(value: Any) -> Any:
    """A JSON-ready copy of an observation, action or ``info`` (what a run file stores)."""
    return to_jsonable(value)


# What dumps_text writes with: json.dumps builds an encoder like it on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=encode_value)
# Dataclasses and datetimes go through to_jsonable (default=) as they do on the json path.
_ORJSON_OPTIONS = _orjson.OPT_PASSTHROUGH_DATACLASS | _orjson.OPT_PASSTHROUGH_DATETIME if _orjson is not None else 0


def decode_value(space: gym.Space[Any] | None, value: Any) -> Any:
    """Turn JSON back into the space's native values (numpy arrays for ``Box``, tuples for ``Tuple``)."""
    if space is None or value is None:
        return value
    if isinstance(space, gym.spaces.Box):
        return np.asarray(value, dtype=space.dtype)
    if isinstance(space, (gym.spaces.MultiBinary, gym.spaces.MultiDiscrete)):
        return np.asarray(value, dtype=space.dtype)
    if isinstance(space, gym.spaces.Discrete):
        return np.int64(value)
    if isinstance(space, gym.spaces.Dict) and isinstance(value, dict):
        return {key: decode_value(space.spaces.get(key), item) for key, item in value.items()}
    if isinstance(space, gym.spaces.Tuple) and isinstance(value, list):
        return tuple(decode_value(child, item) for child, item in zip(space.spaces, value, strict=False))
    if isinstance(space, gym.spaces.Sequence) and isinstance(value, list) and not space.stack:
        return tuple(decode_value(space.feature_space, item) for item in value)
    return value


# The spaces whose values decode_value changes; any other space's values arrive as they are.
_DECODED_SPACES = (
    gym.spaces.Box,
    gym.spaces.MultiBinary,
    gym.spaces.MultiDiscrete,
    gym.spaces.Discrete,
    gym.spaces.Dict,
    gym.spaces.Tuple,
    gym.spaces.Sequence,
)


def _as_is(value: Any) -> Any:
    return value


def value_decoder(space: gym.Space[Any] | None) -> Callable[[Any], Any]:
    """``decode_value`` for one space, its type checks made once (a served env's every action)."""
    if space is None or not isinstance(space, _DECODED_SPACES):
        return _as_is
    return functools.partial(decode_value, space)


def decode_info(info: dict[str, Any] | None, score_object: bool = False) -> dict[str, Any]:
    """``info`` as the local env gives it: with ``score_object``, ``info["score"]`` is a :class:`Score` again."""
    info = dict(info or {})
    raw = info.get("score")
    if score_object and isinstance(raw, dict) and "value" in raw:
        try:
            info["score"] = Score.from_dict(raw)
        except (TypeError, ValueError):
            pass
    return info
