"""Many episodes, cancelled ones included, leave nothing behind; a killed Chromium is an env error.

Counts are scaled for CI time: 500 episodes on ``dom``, 48 on ``chromium``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.builtin.policies import OraclePolicy
from rolloutgym.rollouts import arollout_group
from rolloutgym_browser import BrowserEnv, shutdown_browser
from rolloutgym_browser._processes import descendants
from rolloutgym_browser._server import live_servers
from rolloutgym_browser._service import get_service
from rolloutgym_browser.shop import make_shop_env, shop_tasks
from rolloutgym_testing import LeakSnapshot


def _open_envs() -> list[BrowserEnv]:
    gc.collect()
    return [
        item for item in gc.get_objects() if issubclass(type(item), BrowserEnv) and not item._closed
    ]  # type() avoids __class__ hooks


class AsyncOracle(OraclePolicy):
    """The oracle as an async policy that yields to the loop before each action, like a model call."""

    def for_env(self, environment: Any) -> Any:
        act = super().for_env(environment)

        async def step(observation: Any) -> Any:
            await asyncio.sleep(0)
            return act(observation)

        return step


async def _episodes(backend: str, groups: int, members: int, cancel_every: int, cancel_after: float) -> tuple[int, int]:
    """Run ``groups`` oracle groups; every ``cancel_every``-th group is cancelled after ``cancel_after`` s."""
    tasks = shop_tasks()
    finished = cancelled = 0
    for index in range(groups):
        task = tasks[index % len(tasks)]
        run = asyncio.ensure_future(
            arollout_group(
                task,
                lambda item: make_shop_env(item, backend=backend),
                AsyncOracle(),
                num_rollouts=members,
                concurrency=members,
                max_steps=60,
            )
        )
        if index % cancel_every == cancel_every - 1:
            if cancel_after:
                await asyncio.sleep(cancel_after * (1 + index % 3))
            else:  # a few loop turns: the members are mid-episode
                for _ in range(2 + index % 3):
                    await asyncio.sleep(0)
            run.cancel()
            try:
                await run
            except asyncio.CancelledError:
                cancelled += members
                continue
        group = await run
        assert not group.errors, [error.error_message for error in group.errors]
        assert all(score.value == 1.0 for score in group.scores)
        finished += members
    return finished, cancelled


def _chromium_processes() -> list[int]:
    return [pid for pid, command in descendants(os.getpid()) if command and "chrom" in os.path.basename(command[0])]


@pytest.fixture
def own_temp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh folder of this test's as everyone's TMPDIR: leftovers are counted there, not in the machine's /tmp.

    A short path (``/tmp/rgb-XXXXXXXX``), not ``tmp_path``: Chromium puts a Unix socket in
    TMPDIR, and a socket path may not exceed 107 bytes.
    """
    folder = Path(tempfile.mkdtemp(prefix="rgb-"))
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_500_dom_episodes_with_cancellations_leave_nothing_behind(own_temp: Path) -> None:
    before = LeakSnapshot.take(own_temp)
    finished, cancelled = asyncio.run(_episodes("dom", groups=125, members=4, cancel_every=5, cancel_after=0))
    assert finished + cancelled == 500 and cancelled == 100
    assert not _open_envs(), "every environment is closed, cancelled ones included"
    assert not LeakSnapshot.take(own_temp).leaks_since(before, temp_dir=own_temp)


@pytest.mark.chromium
@pytest.mark.slow
def test_chromium_episodes_with_cancellations_leave_no_context_server_or_process(chromium: str, own_temp: Path) -> None:
    shutdown_browser()  # the browser service starts again here, under this test's TMPDIR
    asyncio.run(_episodes("chromium", groups=1, members=2, cancel_every=10, cancel_after=0.1))  # warm the pool
    before = LeakSnapshot.take(own_temp)
    finished, cancelled = asyncio.run(_episodes("chromium", groups=12, members=4, cancel_every=3, cancel_after=0.3))
    assert finished + cancelled == 48 and cancelled == 16
    assert not _open_envs()
    assert not live_servers(), "every site server is closed"
    service = get_service()
    pool = service.pool
    service.call_blocking(pool.settle())
    assert pool.open_contexts <= 1, f"{pool.open_contexts} contexts open; only the pooled spare may remain"
    assert not LeakSnapshot.take(own_temp).leaks_since(before, settle=30.0, temp_dir=own_temp)
    shutdown_browser()
    assert not _chromium_processes(), "shutdown_browser() ends every Chromium process"
    assert not any(thread.name == "rolloutgym-browser" for thread in threading.enumerate())


@pytest.mark.chromium
def test_killing_chromium_mid_episode_is_an_env_error_and_the_next_episode_gets_a_new_browser(chromium: str) -> None:
    task = next(task for task in shop_tasks() if task.id == "buy-tote-standard")

    class KillingOracle(OraclePolicy):
        """The oracle, but it kills the browser before its third action."""

        def for_env(self, environment: Any) -> Any:
            act = super().for_env(environment)
            steps = iter(range(1000))

            def step(observation: Any) -> Any:
                if next(steps) == 2:
                    for pid in _chromium_processes():
                        os.kill(pid, signal.SIGKILL)
                return act(observation)

            return step

    async def go() -> tuple[Any, Any]:
        broken = await arollout_group(
            task, lambda item: make_shop_env(item, backend="chromium"), KillingOracle(), num_rollouts=1
        )
        healthy = await arollout_group(
            task, lambda item: make_shop_env(item, backend="chromium"), OraclePolicy(), num_rollouts=1
        )
        return broken, healthy

    async def warm() -> None:  # a running browser before counting launches
        await arollout_group(task, lambda item: make_shop_env(item, backend="chromium"), OraclePolicy(), num_rollouts=1)

    asyncio.run(warm())
    launches = get_service().pool.launches
    broken, healthy = asyncio.run(go())
    assert len(broken.errors) == 1 and not broken.trajectories
    error = broken.errors[0]
    assert error.error_type == "BrowserError" and "Chromium" in error.error_message, error
    assert healthy.scores[0].value == 1.0 and not healthy.errors
    assert get_service().pool.launches == launches + 1, "the next episode started a new browser"
    assert not _open_envs() and not live_servers()


@pytest.mark.chromium
def test_a_browser_that_stops_answering_is_an_env_error_within_the_deadline_not_a_hang(
    chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stopped Chromium (SIGSTOP: alive, its pipe open, answering nothing) cannot hang an episode.

    Playwright's timeouts do not cover every request (``evaluate`` has none), so without the
    service's deadline the episode would wait forever; with it, the call fails, the frozen
    browser is killed, and the next episode launches a new one.
    """
    from rolloutgym_browser import _service

    task = next(task for task in shop_tasks() if task.id == "buy-tote-standard")
    frozen: list[int] = []

    class FreezingOracle(OraclePolicy):
        """The oracle, but it freezes every Chromium process before its second action."""

        def for_env(self, environment: Any) -> Any:
            act = super().for_env(environment)
            steps = iter(range(1000))

            def step(observation: Any) -> Any:
                if next(steps) == 1:
                    frozen.extend(_chromium_processes())
                    for pid in frozen:
                        os.kill(pid, signal.SIGSTOP)
                return act(observation)

            return step

    def group(policy: Any) -> Any:
        return asyncio.run(
            arollout_group(task, lambda item: make_shop_env(item, backend="chromium"), policy, num_rollouts=1)
        )

    group(OraclePolicy())  # a running browser before counting launches
    launches = get_service().pool.launches
    monkeypatch.setattr(_service, "CALL_DEADLINE_S", 4.0)
    try:
        broken = group(FreezingOracle())
    finally:
        for pid in frozen:  # never leave a stopped process behind, whatever happened
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert frozen, "the test froze the browser"
    assert len(broken.errors) == 1 and not broken.trajectories
    error = broken.errors[0]
    assert error.error_type == "BrowserError" and "did not answer within 4 s" in error.error_message, error
    assert not set(frozen) & set(_chromium_processes()), "the frozen browser's processes are gone"
    monkeypatch.setattr(_service, "CALL_DEADLINE_S", 90.0)
    healthy = group(OraclePolicy())
    assert healthy.scores[0].value == 1.0 and not healthy.errors
    assert get_service().pool.launches == launches + 1, "the next episode started a new browser"
    assert not _open_envs() and not live_servers()


def _loopback_server(kind: str, root: Path) -> Any:
    from rolloutgym_browser._browser_pool import _BlankSite
    from rolloutgym_browser._miniwob_server import StaticServer
    from rolloutgym_browser._server import SiteServer
    from rolloutgym_browser._site import SiteApp

    return SiteServer(SiteApp(_BlankSite())) if kind == "site" else StaticServer(root)


@pytest.mark.parametrize("kind", ["site", "static"])
@pytest.mark.parametrize("turns_before_close", range(8))
def test_a_connection_accepted_just_before_a_server_closes_is_closed_by_close(
    kind: str, turns_before_close: int, tmp_path: Path
) -> None:
    """A browser's keep-alive socket opened as the server closes is shut by close(), not left open.

    The accepted socket reaches its handler a few loop turns after the accept (on CPython
    3.11, asyncio.Server even drops a socket accepted just before its close, unclosed);
    closing the episode's site server or the MiniWoB file server at every turn of that
    hand-over must still close it (the client reads end of file), or the socket stays open
    until the loop ends and dies as a ResourceWarning.
    """

    async def go() -> bytes | None:
        server = _loopback_server(kind, tmp_path)
        await server.start()
        port = server.port if kind == "site" else int(server.origin.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port), timeout=2)
        try:
            for _ in range(turns_before_close):
                await asyncio.sleep(0)
            await server.close()
            try:
                return await asyncio.to_thread(client.recv, 1)
            except ConnectionResetError:
                return b""  # closed before it was accepted: the kernel resets it
            except TimeoutError:
                return None
        finally:
            client.close()

    assert asyncio.run(go()) == b"", "the server left the connection open after close()"
    gc.collect()  # an unclosed socket would fail the test here (-W error)


@pytest.mark.parametrize("kind", ["site", "static"])
def test_a_loop_shut_down_without_closing_its_servers_leaves_no_socket_open(kind: str, tmp_path: Path) -> None:
    """The browser service's shutdown cancels every task on its loop: the servers' sockets close with them."""

    async def go() -> None:
        server = _loopback_server(kind, tmp_path)
        await server.start()
        port = server.port if kind == "site" else int(server.origin.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port), timeout=2)
        for _ in range(6):
            await asyncio.sleep(0)
        client.close()

    asyncio.run(go())  # asyncio.run cancels the tasks left on the loop, as the service's shutdown does
    gc.collect()  # an unclosed socket would fail the test here (-W error)
