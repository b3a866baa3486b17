"""LoopTurns: a worker gives the event loop a turn only when its members kept it from turning.

The clock is a fake one (``_turns.perf_counter`` replaced), so no test depends on the machine's speed.
"""

from __future__ import annotations

import asyncio

import pytest
from rolloutgym.rollouts import LOOP_TURN_SECONDS, LoopTurns, _turns, arollout_group


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(_turns, "perf_counter", lambda: now[0])
    return now


def test_members_that_never_wait_get_a_turn_after_the_budget_and_one_more_member(clock: list[float]) -> None:
    async def main() -> list[bool]:
        turns = LoopTurns()
        answers = [turns.due()]  # within the budget
        clock[0] += LOOP_TURN_SECONDS * 1.5
        answers.append(turns.due())  # over it: asks the loop to note its next turn, decides next time
        clock[0] += 0.001  # a member that never waited ran
        answers.append(turns.due())  # the loop did not turn: a turn is due
        await asyncio.sleep(0)  # the caller gives it
        answers.append(turns.due())  # a fresh budget
        return answers

    assert asyncio.run(main()) == [False, False, True, False]


def test_members_that_wait_owe_no_extra_turn(clock: list[float]) -> None:
    async def main() -> list[bool]:
        turns = LoopTurns()
        answers = []
        for _ in range(6):
            clock[0] += LOOP_TURN_SECONDS * 0.7
            answers.append(turns.due())
            await asyncio.sleep(0)  # the member waited (the loop turned)
        return answers

    assert asyncio.run(main()) == [False] * 6


def test_a_group_of_members_that_never_wait_hears_a_cancel() -> None:
    """Members with no await at all: the group still lets a cancellation in (the real clock)."""

    class Busy:
        async def reset(self, *, seed=None, options=None):
            return 0, {}

        async def step(self, action):
            return 1, 1.0, True, False, {}

        async def close(self):
            pass

    started = []

    def make(item):
        started.append(1)
        return Busy()

    async def main() -> None:
        group = asyncio.ensure_future(arollout_group(0, make, lambda o: 1, num_rollouts=10**6, concurrency=4))
        await asyncio.sleep(0.05)
        group.cancel()
        with pytest.raises(asyncio.CancelledError):
            await group

    asyncio.run(main())
    assert 0 < len(started) < 10**6
