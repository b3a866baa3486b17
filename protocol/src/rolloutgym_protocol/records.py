"""The rollout records: :class:`Step`, :class:`Trajectory`, :class:`TrajectoryGroup`, :class:`RolloutError`.

Frozen dataclasses, cheap to build (they sit on the hot path), with an exact JSON round
trip through ``to_dict``/``from_dict``. ``to_dict`` output is always strict JSON, whatever
the policy said: values JSON cannot hold (NaN, infinities, huge ints, lone surrogates,
bytes, deep nesting) are written in the tagged forms of :mod:`rolloutgym_protocol.jsonvalues`
and ``from_dict`` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ._empty import SHARED_EMPTY
from ._step import ActionT, ObservationT, Step, _record_repr
from .jsonvalues import from_jsonable, strict_text, to_jsonable
from .scores import Score

__all__ = ["SHARED_EMPTY", "RolloutError", "Step", "Trajectory", "TrajectoryGroup", "from_jsonable", "to_jsonable"]

ItemT = TypeVar("ItemT")


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
