"""Member outcomes in, finished groups out: :class:`GroupCollector` (used by every executor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory, TrajectoryGroup

__all__ = ["GroupCollector"]


class GroupCollector:
    """Collects member outcomes and hands back each group once, when its last member is in.

    Used by :func:`arollout_group` and by every executor: open a group with
    :meth:`open`, add each member's trajectory or error with :meth:`add`; the call that
    completes a group returns its :class:`TrajectoryGroup` (members in member order).
    """

    def __init__(self) -> None:
        self._open: dict[Any, tuple[Any, str, dict[int, Trajectory | RolloutError], list[int], dict[str, Any]]] = {}

    def open(self, key: Any, item: Any, item_id: Any, size: int, metadata: Mapping[str, Any] | None = None) -> None:
        """Expect ``size`` members for ``key`` (``item_id`` ``None`` or ``""`` becomes ``"0"``).

        Holds only the outcomes that arrived (memory grows with the members finished, not with ``size``).
        """
        identifier = "0" if item_id is None or item_id == "" else str(item_id)
        self._open[key] = (item, identifier, {}, [size], dict(metadata) if metadata else {})

    def note(self, key: Any, **metadata: Any) -> None:
        """Add metadata to an open group (e.g. ``retried=True``)."""
        self._open[key][4].update(metadata)

    def add(self, key: Any, member: int, outcome: Trajectory | RolloutError) -> TrajectoryGroup | None:
        """Record one member; returns the finished group when this was its last member."""
        entry = self._open[key]
        slots = entry[2]
        if member in slots:
            raise RuntimeError(f"member {member} of group {entry[1]!r} was reported twice")
        slots[member] = outcome
        entry[3][0] -= 1
        if entry[3][0]:
            return None
        del self._open[key]
        item, identifier, arrived, _, metadata = entry
        outcomes = [arrived[member] for member in sorted(arrived)]
        trajectories = tuple(record for record in outcomes if type(record) is not RolloutError)
        errors = tuple(record for record in outcomes if type(record) is RolloutError)
        return TrajectoryGroup(item, identifier, trajectories, (), errors, metadata)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._open)
