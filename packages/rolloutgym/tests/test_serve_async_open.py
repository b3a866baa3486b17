"""Opening sessions of an env URL from a run does not block the event loop (issue 30).

A run of ``http://HOST/toy/guess-v0`` builds each member's env with ``ResolvedEnv.make_task``
and the engine awaits it: the session opens over the loop's WebSocket, so other tasks of the
loop run while eight members open at once. The test tells that apart from the blocking
constructor (what ``make_task`` did before) without timing anything: a marker task scheduled
after the eight opens records how many of them had finished when it first ran. Awaited opens
yield at their first network wait, so the marker runs while all eight are in flight (none
finished); blocking opens each run to the end in their first step, so all eight are finished
before the marker gets a turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from rolloutgym.serve import AsyncRemoteEnv, ServerProcess
from rolloutgym.serve.client_async import PendingRemoteEnv
from rolloutgym.sources import resolve_env

GUESS = "toy/guess-v0"
OPENS = 8


@pytest.fixture(scope="module")
def server() -> Any:
    with ServerProcess([GUESS]) as running:
        yield running


async def _finished_when_the_loop_turned(opens: list[Callable[[], Awaitable[Any]]]) -> tuple[int, list[Any]]:
    """``(opens finished when a task scheduled after them first ran, the envs)``."""
    finished = 0

    async def counted(open_one: Callable[[], Awaitable[Any]]) -> Any:
        nonlocal finished
        environment = await open_one()
        finished += 1
        return environment

    async def marker() -> int:
        return finished

    *environments, seen = await asyncio.gather(*(counted(open_one) for open_one in opens), marker())
    return seen, environments


def test_eight_concurrent_opens_do_not_block_the_loop(server: ServerProcess) -> None:
    resolved = resolve_env(server.url(GUESS))  # lists the tasks (sync, before the loop runs)

    def pending(index: int) -> Callable[[], Awaitable[Any]]:
        made = resolved.make_task(index)
        assert isinstance(made, PendingRemoteEnv)  # no I/O yet

        async def open_one() -> Any:
            return await made

        return open_one

    def blocking(index: int) -> Callable[[], Awaitable[Any]]:
        async def open_one() -> Any:
            return AsyncRemoteEnv(server.url(GUESS), task=index)

        return open_one

    async def measure() -> tuple[int, int, list[Any], list[Any]]:
        await (await resolved.make_task(0)).close()  # imports, the loop's WebSocket: opened once first
        seen_pending, kept = await _finished_when_the_loop_turned([pending(index) for index in range(OPENS)])
        seen_blocking, blocked = await _finished_when_the_loop_turned([blocking(index) for index in range(OPENS)])
        for environment in blocked:
            await environment.close()
        try:  # the envs opened without blocking are live sessions
            observations = [(await environment.reset(seed=0))[0] for environment in kept]
        finally:
            for environment in kept:
                await environment.close()
        return seen_pending, seen_blocking, kept, observations

    seen_pending, seen_blocking, kept, observations = asyncio.run(measure())
    # The blocking constructor holds the loop for all eight opens: the marker runs after all of them.
    assert seen_blocking == OPENS
    # Awaited opens let the loop run other tasks while they are in flight: none had finished.
    assert seen_pending == 0
    assert all(isinstance(environment, AsyncRemoteEnv) for environment in kept)
    assert [environment.rolloutgym_task_id for environment in kept] == resolved.task_ids[:OPENS]
    assert [environment.rolloutgym_env_id for environment in kept] == [GUESS] * OPENS
    assert len(observations) == OPENS and None not in observations


def test_a_pending_env_used_without_await_opens_on_first_use(server: ServerProcess) -> None:
    """Sync callers of ``make_task`` (``rolloutgym info URL``) still get a working env."""
    resolved = resolve_env(server.url(GUESS))
    environment = resolved.make_task(2)
    assert "not open yet" in repr(environment)
    assert environment.rolloutgym_task_id == resolved.task_ids[2]  # opens it (one blocking POST)
    assert environment.session_id and "not open yet" not in repr(environment)

    async def first() -> Any:
        try:
            return (await environment.reset(seed=0))[0]
        finally:
            await environment.close()

    assert asyncio.run(first()) is not None


def test_make_async_of_a_url_opens_without_blocking_the_loop(server: ServerProcess) -> None:
    """``rolloutgym.make_async(URL)`` (the per-episode door of the TRL and batch paths) does no I/O when called.

    The env it returns is an ``AsyncEnv`` that opens its session when the engine awaits it,
    so eight episodes that make their envs at once on one loop open them concurrently; a
    session made and closed without being used is never opened.
    """
    import rolloutgym as rg
    from rolloutgym_protocol import AsyncEnv

    url = server.url(GUESS)
    made = [rg.make_async(url, task=index) for index in range(OPENS)]
    assert all(isinstance(environment, AsyncEnv) and "not open yet" in repr(environment) for environment in made)

    async def measure() -> tuple[int, list[Any], list[Any]]:
        unused = rg.make_async(url, task=0)
        await unused.close()  # never opened: nothing to close, nothing opened
        assert "not open yet" in repr(unused)
        await (await rg.make_async(url, task=0)).close()  # the loop's WebSocket: opened once first

        def opener(environment: Any) -> Callable[[], Awaitable[Any]]:
            async def open_one() -> Any:
                return await environment

            return open_one

        seen, kept = await _finished_when_the_loop_turned([opener(environment) for environment in made])
        try:
            observations = [(await environment.reset(seed=0))[0] for environment in kept]
        finally:
            for environment in kept:
                await environment.close()
        return seen, kept, observations

    seen, kept, observations = asyncio.run(measure())
    assert seen == 0  # none had finished when the marker ran: the opens did not hold the loop
    assert [environment.rolloutgym_task_id for environment in kept] == [f"guess-{index:02d}" for index in range(OPENS)]
    assert len(observations) == OPENS and None not in observations


def test_load_of_a_url_is_the_servers_tasks_with_sessions_as_envs(server: ServerProcess) -> None:
    """``rolloutgym.load(URL)``: the served tasks as an ``RLDataset``; ``make_env`` opens a session when awaited."""
    import rolloutgym as rg

    url = server.url(GUESS)
    local = rg.load(GUESS)
    dataset = rg.load(url)
    assert len(dataset) == len(local) and dataset.metadata["env_id"] == GUESS
    assert [dataset.get_item_id(item) for item in dataset] == [local.get_item_id(item) for item in local]
    made = dataset.make_env(dataset[3])
    assert isinstance(made, PendingRemoteEnv) and "not open yet" in repr(made)
    group = asyncio.run(
        rg.arollout_group(dataset[3], dataset.make_env, rg.make_policy("oracle"), num_rollouts=3, seed=0)
    )
    assert list(group.rewards) == [1.0, 1.0, 1.0] and not group.errors
    with pytest.raises(Exception, match="no tasks in split 'nope'"):
        rg.load(url, split="nope")
