"""The rollout records: :class:`Step`, :class:`Trajectory`, :class:`TrajectoryGroup`, :class:`RolloutError`.

Frozen dataclasses, cheap to build (they sit on the hot path), with an exact JSON round
trip through ``to_dict``/``from_dict``. ``to_dict`` output is always strict JSON, whatever
the policy said: values JSON cannot hold (NaN, infinities, huge ints, lone surrogates,
bytes, deep nesting) are written in the tagged forms of :mod:`rolloutgym_protocol.jsonvalues`
and ``from_dict`` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from ._empty import SHARED_EMPTY
from .display import safe_repr
from .jsonvalues import from_jsonable, strict_text, to_jsonable
from .scores import Score

__all__ = ["SHARED_EMPTY", "RolloutError", "Step", "Trajectory", "TrajectoryGroup", "from_jsonable", "to_jsonable"]


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
ItemT = TypeVar("ItemT")

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


@dataclass(frozen=True, slots=True)
class Trajectory(Generic[ObservationT, ActionT]):
    """One episode: the reset observation, the steps, and how it ended.

    ``stop_reason`` says why collection stopped: ``"terminated"``, ``"truncated"``
    (by the env), ``"max_steps"``, ``"timeout"``, or an engine-specific reason such as
    ``"max_seq_len"``.
    """

    __strict_json__ = True  # to_dict() output is already strict JSON (see jsonvalues)
    __repr__ = _record_repr

    initial_observation: Any
    steps: tuple[Step, ...] = ()
    initial_info: dict[str, Any] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None

    def __post_init__(self) -> None:
        setter = object.__setattr__
        if type(self.steps) is not tuple:
            setter(self, "steps", tuple(self.steps))
        if type(self.initial_info) is not dict and self.initial_info is not SHARED_EMPTY:
            setter(self, "initial_info", dict(self.initial_info))
        if type(self.metadata) is not dict:
            setter(self, "metadata", dict(self.metadata))
        setter(self, "terminated", bool(self.terminated))
        setter(self, "truncated", bool(self.truncated))

    @classmethod
    def _trusted(
        cls,
        initial_observation: Any,
        steps: tuple[Step, ...],
        initial_info: dict[str, Any],
        terminated: bool,
        truncated: bool,
        metadata: dict[str, Any],
        stop_reason: str | None,
    ) -> Trajectory:
        """Build a trajectory from values already normalised (a tuple of steps, dicts, bool flags).

        The rollout engine's hot path, like :meth:`Step._trusted`: a plain ``__init__`` of a
        twin class with the same slots (the frozen dataclass ``__init__`` and ``__post_init__``
        cost about four times as much).
        """
        trajectory = _TrajectoryBuilder(
            initial_observation, steps, initial_info, terminated, truncated, metadata, stop_reason
        )
        if cls is Trajectory:
            trajectory.__class__ = Trajectory
            return trajectory
        return cls(initial_observation, steps, initial_info, terminated, truncated, metadata, stop_reason)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    @property
    def observations(self) -> tuple[Any, ...]:
        """The reset observation followed by each step's ``next_observation``."""
        return (self.initial_observation, *(step.next_observation for step in self.steps))

    @property
    def actions(self) -> tuple[Any, ...]:
        return tuple(step.action for step in self.steps)

    @property
    def rewards(self) -> tuple[float, ...]:
        return tuple(step.reward for step in self.steps)

    @property
    def total_reward(self) -> float:
        """The undiscounted sum of step rewards."""
        steps = self.steps
        if len(steps) == 1:
            reward = steps[0].reward
            if reward and type(reward) is float:
                return reward  # the step's own float: no new one per trajectory (-0.0 still gives 0.0)
        return float(sum(step.reward for step in steps))

    @property
    def score(self) -> Score:
        """The last step's Score from info, else ``Score(total_reward)``."""
        if self.steps:
            last = Score.from_info(self.steps[-1].info)
            if last is not None:
                return last
        return Score._plain(self.total_reward)

    @property
    def complete(self) -> bool:
        return self.terminated or self.truncated

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "initial_observation": to_jsonable(self.initial_observation),
            "steps": [step.to_dict() for step in self.steps],
            "initial_info": to_jsonable(self.initial_info) if self.initial_info else {},
            "terminated": self.terminated,
            "truncated": self.truncated,
            "metadata": to_jsonable(self.metadata),
        }
        if self.stop_reason is not None:
            data["stop_reason"] = strict_text(self.stop_reason)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        return cls(
            initial_observation=from_jsonable(data["initial_observation"]),
            steps=tuple(Step.from_dict(step) for step in data.get("steps", ())),
            initial_info=dict(from_jsonable(data.get("initial_info") or {})),
            terminated=bool(data.get("terminated", False)),
            truncated=bool(data.get("truncated", False)),
            metadata=dict(from_jsonable(data.get("metadata") or {})),
            stop_reason=data.get("stop_reason"),
        )


class _TrajectoryBuilder(Generic[ObservationT, ActionT]):
    """:class:`Trajectory`'s twin: the same slots, a plain ``__init__`` (see ``Trajectory._trusted``)."""

    __slots__ = Trajectory.__slots__

    def __init__(
        self,
        initial_observation: Any,
        steps: tuple[Step, ...],
        initial_info: dict[str, Any],
        terminated: bool,
        truncated: bool,
        metadata: dict[str, Any],
        stop_reason: str | None,
    ) -> None:
        self.initial_observation = initial_observation
        self.steps = steps
        self.initial_info = initial_info
        self.terminated = terminated
        self.truncated = truncated
        self.metadata = metadata
        self.stop_reason = stop_reason


if _TrajectoryBuilder.__init__.__code__.co_varnames[1:8] != Trajectory.__slots__:  # pragma: no cover
    raise RuntimeError("Trajectory's fields and _TrajectoryBuilder's differ; update both")


@dataclass(frozen=True, slots=True)
class RolloutError:
    """A record (not an exception) of a rollout that failed.

    ``where`` is ``"env"``, ``"policy"``, ``"grader"``, ``"make_env"`` or ``"engine"``;
    ``member`` is the index of the failed member within its group. ``partial`` is the
    episode as far as it got (the reset observation and the steps played before the
    failure), when the engine had started it; it is data, not a scored trajectory.
    ``action`` is the action being stepped when the env (or the action check) failed, so
    the action that caused an env error is in the run file (``None`` when the failure
    was not in a step; a ``None`` action reads the same).
    """

    __strict_json__ = True  # to_dict() output is already strict JSON (see jsonvalues)
    __repr__ = _record_repr

    error_type: str
    error_message: str
    where: str = "engine"
    member: int | None = None
    traceback: str | None = None
    step: int | None = None
    partial: Trajectory | None = None
    action: Any = None

    @classmethod
    def from_exception(
        cls,
        exc: BaseException,
        *,
        where: str,
        member: int | None = None,
        step: int | None = None,
        partial: Trajectory | None = None,
        action: Any = None,
    ) -> RolloutError:
        import traceback as traceback_module

        text = "".join(traceback_module.format_exception(type(exc), exc, exc.__traceback__))
        try:
            message = str(exc)
        except Exception:  # an exception whose __str__ fails still gets recorded
            message = f"<unprintable {type(exc).__name__}>"
        return cls(type(exc).__name__, message, where, member, text[-4000:], step, partial, action)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "error_type": strict_text(self.error_type),
            "error_message": strict_text(self.error_message),
            "where": self.where,
            "member": self.member,
            "traceback": None if self.traceback is None else strict_text(self.traceback),
            "step": self.step,
        }
        if self.partial is not None:
            data["partial"] = self.partial.to_dict()
        if self.action is not None:
            data["action"] = to_jsonable(self.action)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RolloutError:
        partial = data.get("partial")
        return cls(
            error_type=data["error_type"],
            error_message=data["error_message"],
            where=data.get("where", "engine"),
            member=data.get("member"),
            traceback=data.get("traceback"),
            step=data.get("step"),
            partial=None if partial is None else Trajectory.from_dict(partial),
            action=from_jsonable(data["action"]) if "action" in data else None,
        )


@dataclass(frozen=True, slots=True)
class TrajectoryGroup(Generic[ItemT, ObservationT, ActionT]):
    """Independent episodes for one item, with their scores and any failed members.

    ``scores`` defaults to each trajectory's ``score``; ``errors`` holds a
    :class:`RolloutError` for each member that failed (those members have no trajectory).
    """

    __strict_json__ = True  # to_dict() output is already strict JSON (see jsonvalues)

    item: Any
    item_id: str
    trajectories: tuple[Trajectory, ...]
    scores: tuple[Score, ...] = ()
    errors: tuple[RolloutError, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        setter = object.__setattr__
        trajectories = tuple(self.trajectories)
        setter(self, "trajectories", trajectories)
        scores = tuple(self.scores) if self.scores else tuple(t.score for t in trajectories)
        if len(scores) != len(trajectories):
            raise ValueError("scores must have one entry per trajectory")
        setter(self, "scores", scores)
        setter(self, "errors", tuple(self.errors))
        if type(self.metadata) is not dict:
            setter(self, "metadata", dict(self.metadata))

    @property
    def rewards(self) -> tuple[float, ...]:
        """Each trajectory's score value (the terminal score when there is one)."""
        return tuple(score.value for score in self.scores)

    @property
    def num_members(self) -> int:
        """Trajectories plus failed members."""
        return len(self.trajectories) + len(self.errors)

    def __repr__(self) -> str:
        # Short on purpose: asyncio formats a finished task's result (asyncio.run does when it
        # restores the SIGINT handler), and the full repr of thousands of trajectories takes seconds.
        return (
            f"TrajectoryGroup(item_id={self.item_id!r}, trajectories={len(self.trajectories)}, "
            f"errors={len(self.errors)}, rewards={list(self.rewards)[:8]!r:.200})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": to_jsonable(self.item),
            "item_id": strict_text(self.item_id),
            "trajectories": [trajectory.to_dict() for trajectory in self.trajectories],
            "scores": [score.to_dict() for score in self.scores],
            "errors": [error.to_dict() for error in self.errors],
            "metadata": to_jsonable(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrajectoryGroup:
        return cls(
            item=from_jsonable(data.get("item")),
            item_id=str(data["item_id"]),
            trajectories=tuple(Trajectory.from_dict(item) for item in data.get("trajectories", ())),
            scores=tuple(Score.from_dict(item) for item in data.get("scores", ())),
            errors=tuple(RolloutError.from_dict(item) for item in data.get("errors", ())),
            metadata=dict(from_jsonable(data.get("metadata") or {})),
        )
