"""Loop turns for workers that run group members one after another (:class:`LoopTurns`)."""

from __future__ import annotations

import asyncio
import time

__all__ = ["LOOP_TURN_SECONDS", "LoopTurns"]

# A worker running members that never wait (a sync env and policy) hands the event loop a turn this
# often, so a cancellation (Ctrl-C) is heard and the other workers run.
LOOP_TURN_SECONDS = 0.02
perf_counter = time.perf_counter


class LoopTurns:
    """One worker's clock: whether it must give the event loop a turn before its next member.

    ``if turns.due(): await asyncio.sleep(0)`` between members. A worker whose members wait (an
    LLM call, a sleep) gives the loop turns anyway and should not pay an extra one: after
    :data:`LOOP_TURN_SECONDS` the worker asks the loop to note its next turn (one ``call_soon``)
    and checks at the next member whether that turn came, i.e. whether a member waited in
    between; only when none did is a turn due. Members that never wait thus give the loop a
    turn every ``LOOP_TURN_SECONDS`` plus one member, as before; members that wait no longer
    add one (a per-worker clock alone made them pay an extra turn every few members: ~12% of
    ``arollout_group``'s CPU in ``benchmarks/group_throughput.py``).
    """

    __slots__ = ("_flag", "_loop", "_since")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._since = perf_counter()
        self._flag: list[bool] | None = None

    def due(self) -> bool:
        """Whether to ``await asyncio.sleep(0)`` now (counted as the turn given)."""
        now = perf_counter()
        if now - self._since <= LOOP_TURN_SECONDS:
            return False
        flag = self._flag
        if flag is None:  # ask the loop to note its next turn; decide at the next member
            self._flag = flag = [False]
            self._loop.call_soon(flag.__setitem__, 0, True)
            return False
        self._since, self._flag = now, None
        return not flag[0]  # the loop turned since the request: a member waited, no turn is due
