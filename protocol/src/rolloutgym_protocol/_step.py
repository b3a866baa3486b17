"""The step record, :class:`Step` (one per environment step), and its fast builder.

Part of :mod:`rolloutgym_protocol.records` (import it from there); the episode-level records
(:class:`~rolloutgym_protocol.records.Trajectory`, ``RolloutError``, ``TrajectoryGroup``) are in
that module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from ._empty import SHARED_EMPTY
from .display import safe_repr
from .jsonvalues import from_jsonable, strict_text, to_jsonable
from .scores import Score


def _record_repr(record: Any) -> str:
    """The dataclass repr, also for values ``repr`` refuses (an int too long to print: ``display.safe_repr``)."""
    shown = ", ".join(f"{item.name}={safe_repr(getattr(record, item.name))}" for item in fields(record))
    return f"{type(record).__qualname__}({shown})"


def _decoded_floats(values: Any) -> tuple[float, ...] | None:
    if values is None:
        return None
    return tuple(float(from_jsonable(value)) if type(value) is dict else value for value in values)


def _encoded_floats(values: tuple[float, ...]) -> list[Any]:
    total = sum(values)  # finite exactly when every value is (or an overflow: then encode)
    if total - total == 0.0:
        return list(values)
    return [to_jsonable(value) for value in values]


ObservationT = TypeVar("ObservationT")
ActionT = TypeVar("ActionT")

_new = object.__new__
_set = object.__setattr__
_STEP_FIELDS = (
    "observation",
    "action",
    "reward",
    "next_observation",
    "terminated",
    "truncated",
    "info",
    "policy_info",
    "policy_tokens",
    "policy_logprobs",
    "policy_stop_reason",
    "observation_tokens",
)


def _optional_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@dataclass(frozen=True, slots=True)
class Step(Generic[ObservationT, ActionT]):
    """One environment transition plus the policy's side of it.

    ``info`` belongs to the environment, ``policy_info`` to the policy.
    ``policy_tokens``/``policy_logprobs`` are the sampled tokens verbatim;
    ``observation_tokens`` are the tokens appended to the context before sampling
    (loss mask 0), so a trajectory's token sequence is their concatenation.

    Steps have ``__slots__`` (no instance dict: 128 bytes each). An empty ``info`` or
    ``policy_info`` of a step built by the engine is :data:`SHARED_EMPTY`, a read-only ``{}``.
    """

    __strict_json__ = True  # to_dict() output is already strict JSON (see jsonvalues)
    __repr__ = _record_repr

    observation: Any
    action: Any
    reward: float
    next_observation: Any
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    policy_info: dict[str, Any] = field(default_factory=dict)
    policy_tokens: tuple[int, ...] | None = None
    policy_logprobs: tuple[float, ...] | None = None
    policy_stop_reason: str | None = None
    observation_tokens: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        setter = object.__setattr__
        if type(self.reward) is not float:
            setter(self, "reward", float(self.reward))
        if type(self.info) is not dict and self.info is not SHARED_EMPTY:
            setter(self, "info", dict(self.info))
        if type(self.policy_info) is not dict and self.policy_info is not SHARED_EMPTY:
            setter(self, "policy_info", dict(self.policy_info))
        if self.policy_tokens is not None and type(self.policy_tokens) is not tuple:
            setter(self, "policy_tokens", tuple(self.policy_tokens))
        if self.policy_logprobs is not None and type(self.policy_logprobs) is not tuple:
            setter(self, "policy_logprobs", tuple(float(value) for value in self.policy_logprobs))
        if self.observation_tokens is not None and type(self.observation_tokens) is not tuple:
            setter(self, "observation_tokens", tuple(self.observation_tokens))

    @property
    def score(self) -> Score | None:
        """The step's :class:`Score` from ``info["score"]``, if any."""
        return Score.from_info(self.info)

    @classmethod
    def _trusted(
        cls,
        observation: Any,
        action: Any,
        reward: float,
        next_observation: Any,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        policy_info: dict[str, Any],
        policy_tokens: tuple[int, ...] | None = None,
        policy_logprobs: tuple[float, ...] | None = None,
        policy_stop_reason: str | None = None,
        observation_tokens: tuple[int, ...] | None = None,
    ) -> Step:
        """Build a step from values already normalised (float reward, bool flags, dicts, tuples).

        The rollout engine's hot path: the slots are filled by a plain ``__init__`` of a
        twin class with the same layout (no frozen-attribute writes, no ``__post_init__``).
        """
        step = _StepBuilder(
            observation,
            action,
            reward,
            next_observation,
            terminated,
            truncated,
            info,
            policy_info,
            policy_tokens,
            policy_logprobs,
            policy_stop_reason,
            observation_tokens,
        )
        if cls is Step:
            step.__class__ = Step
            return step
        other = _new(cls)  # a subclass may add fields or an instance dict: fill it field by field
        for name in _STEP_FIELDS:
            _set(other, name, getattr(step, name))
        return other

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (optional token fields only when set)."""
        data: dict[str, Any] = {
            "observation": to_jsonable(self.observation),
            "action": to_jsonable(self.action),
            "reward": self.reward if self.reward - self.reward == 0.0 else to_jsonable(self.reward),
            "next_observation": to_jsonable(self.next_observation),
            "terminated": self.terminated,
            "truncated": self.truncated,
            "info": to_jsonable(self.info) if self.info else {},
            "policy_info": to_jsonable(self.policy_info) if self.policy_info else {},
        }
        elided = _sampling_copies(self)
        if elided:
            # The engine copies the sampling fields into policy_info (as rolloutlib did); the
            # run file keeps them once and from_dict copies them back.
            data["policy_info"] = to_jsonable(
                {key: value for key, value in self.policy_info.items() if key not in elided}
            )
            data["policy_info_copies"] = elided
        if self.policy_tokens is not None:
            data["policy_tokens"] = list(self.policy_tokens)
        if self.policy_logprobs is not None:
            data["policy_logprobs"] = _encoded_floats(self.policy_logprobs)
        if self.policy_stop_reason is not None:
            data["policy_stop_reason"] = strict_text(self.policy_stop_reason)
        if self.observation_tokens is not None:
            data["observation_tokens"] = list(self.observation_tokens)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        """Rebuild a step from :meth:`to_dict` output."""
        reward = data["reward"]
        return cls(
            observation=from_jsonable(data["observation"]),
            action=from_jsonable(data["action"]),
            reward=from_jsonable(reward) if type(reward) is dict else reward,
            next_observation=from_jsonable(data["next_observation"]),
            terminated=bool(data["terminated"]),
            truncated=bool(data["truncated"]),
            info=dict(from_jsonable(data.get("info") or {})),
            policy_info=_with_copies(dict(from_jsonable(data.get("policy_info") or {})), data),
            policy_tokens=_optional_tuple(data.get("policy_tokens")),
            policy_logprobs=_decoded_floats(data.get("policy_logprobs")),
            policy_stop_reason=data.get("policy_stop_reason"),
            observation_tokens=_optional_tuple(data.get("observation_tokens")),
        )


_SAMPLING_KEYS = (("tokens", "policy_tokens"), ("logprobs", "policy_logprobs"), ("stop_reason", "policy_stop_reason"))


def _sampling_copies(step: Step) -> list[str]:
    """The policy_info keys that only repeat a dedicated sampling field of ``step``."""
    info = step.policy_info
    if not info:
        return []
    copies = []
    for key, attribute in _SAMPLING_KEYS:
        value = getattr(step, attribute)
        if value is not None and key in info and (info[key] is value or info[key] == value):
            copies.append(key)
    return copies


def _with_copies(policy_info: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    for key in data.get("policy_info_copies") or ():
        attribute = dict(_SAMPLING_KEYS).get(key)
        if attribute is not None and data.get(attribute) is not None:
            value = data[attribute]
            policy_info[key] = (
                _decoded_floats(value) if key == "logprobs" else tuple(value) if key == "tokens" else value
            )
    return policy_info


class _StepBuilder(Generic[ObservationT, ActionT]):
    """:class:`Step`'s twin: the same slots, and a plain ``__init__`` that fills them fast.

    ``Step._trusted`` builds one and assigns ``__class__ = Step`` (allowed: the layouts are
    identical). Never handed out as itself.
    """

    __slots__ = _STEP_FIELDS

    def __init__(
        self,
        observation: Any,
        action: Any,
        reward: float,
        next_observation: Any,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        policy_info: dict[str, Any],
        policy_tokens: tuple[int, ...] | None,
        policy_logprobs: tuple[float, ...] | None,
        policy_stop_reason: str | None,
        observation_tokens: tuple[int, ...] | None,
    ) -> None:
        self.observation = observation
        self.action = action
        self.reward = reward
        self.next_observation = next_observation
        self.terminated = terminated
        self.truncated = truncated
        self.info = info
        self.policy_info = policy_info
        self.policy_tokens = policy_tokens
        self.policy_logprobs = policy_logprobs
        self.policy_stop_reason = policy_stop_reason
        self.observation_tokens = observation_tokens


if Step.__slots__ != _STEP_FIELDS:  # pragma: no cover - a field added to Step but not here
    raise RuntimeError("Step's fields and _STEP_FIELDS differ; update both")
