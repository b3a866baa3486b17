"""Browser environment speed: ``dom`` steps/s, ``chromium`` per-action cost, pooled reset.

Three measurements on ``browser/shop-v0`` oracle trajectories:

1. ``dom`` steps per second (``env.step`` on the pure-Python backend; target >= 2,000).
2. ``chromium`` time per action of the environment (action + reading the page back for the
   observation) against raw Playwright performing the same low-level actions on the same
   pages in the same browser (target <= 1.2x). Raw episodes and env episodes alternate.
3. Episode reset with context pooling (``env.reset``; target <= 0.5 s) against a reset
   that creates its context and page on demand (no pool).

Usage: ``python benchmarks/browser_env.py [--rounds 5] [--dom-seconds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from rolloutgym_browser._dom import DomBackend
from rolloutgym_browser._service import get_service, shutdown_browser
from rolloutgym_browser.shop import make_shop_env, shop_tasks

CHROMIUM_TASKS = (
    "buy-tote-standard",
    "support-return",
    "add-board-and-skillet",
    "email-phone",
    "cheapest-outdoor-to-cart",
    "reorder-1001",
)


class RecordingBackend(DomBackend):
    """The dom backend, recording the low-level browser operations each action needs."""

    def __init__(self) -> None:
        super().__init__()
        self.operations: list[tuple[Any, ...]] = []

    async def open(self, url: str) -> None:
        self.operations.append(("goto", url))
        await super().open(url)

    async def click(self, element_id: str, *, navigates: bool) -> None:
        self.operations.append(("click", element_id, navigates))
        await super().click(element_id, navigates=navigates)

    async def fill(self, element_id: str, text: str) -> None:
        self.operations.append(("fill", element_id, text))
        await super().fill(element_id, text)

    async def select(self, element_id: str, value: str) -> None:
        self.operations.append(("select", element_id, value))
        await super().select(element_id, value)

    async def set_checked(self, element_id: str, checked: bool) -> None:
        self.operations.append(("check", element_id, checked))
        await super().set_checked(element_id, checked)


def _task(task_id: str) -> Any:
    return next(task for task in shop_tasks() if task.id == task_id)


async def _oracle_episode(environment: Any) -> tuple[int, float, list[float]]:
    """Reset and play the oracle; returns (steps, reset seconds, per-action seconds)."""
    started = time.perf_counter()
    await environment.reset(seed=0)
    reset = time.perf_counter() - started
    steps, action_times = 0, []
    while True:
        action = environment.oracle_action()
        started = time.perf_counter()
        _, _, terminated, _, _ = await environment.step(action)
        elapsed = time.perf_counter() - started
        steps += 1
        if terminated:
            return steps, reset, action_times
        action_times.append(elapsed)


async def dom_steps_per_second(seconds: float) -> float:
    tasks = shop_tasks()
    steps, busy, index = 0, 0.0, 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        environment = make_shop_env(tasks[index % len(tasks)])
        await environment.reset(seed=0)
        while True:
            action = environment.oracle_action()
            started = time.perf_counter()
            _, _, terminated, _, _ = await environment.step(action)
            busy += time.perf_counter() - started
            steps += 1
            if terminated:
                break
        await environment.close()
        index += 1
    return steps / busy


async def _recorded_operations(task_id: str) -> list[tuple[Any, ...]]:
    backend = RecordingBackend()
    environment = make_shop_env(_task(task_id), backend=backend)
    await environment.reset(seed=0)
    backend.operations.clear()
    per_action: list[tuple[Any, ...]] = []
    while True:
        before = len(backend.operations)
        _, _, terminated, _, _ = await environment.step(environment.oracle_action())
        if terminated:
            break
        per_action.append(tuple(backend.operations[before:]))
    await environment.close()
    return per_action


async def _raw_episode(task_id: str, actions: list[tuple[Any, ...]], pooled: bool) -> tuple[float, list[float]]:
    """Raw Playwright on the service loop: same site, same browser, same low-level operations."""
    from rolloutgym_browser._browser_pool import get_pool
    from rolloutgym_browser._server import SiteServer
    from rolloutgym_browser._shop_site import ShopSite
    from rolloutgym_browser._site import SiteApp

    environment_task = _task(task_id)
    app = SiteApp(ShopSite(), environment_task.setup)
    server = SiteServer(app)
    await server.start()
    pool = await get_pool(make_shop_env(environment_task, backend="chromium").backend.executable_path)
    started = time.perf_counter()
    if pooled:
        context, page = await pool.acquire()
    else:
        browser = await pool._ensure_browser()
        context = await browser.new_context()
        page = await context.new_page()
    await page.goto(server.origin + environment_task.start_url, wait_until="load")
    reset = time.perf_counter() - started
    if pooled:
        pool.prepare_spare()  # as the env does, so the next episode finds a spare
    times = []
    for operations in actions:
        started = time.perf_counter()
        for operation in operations:
            kind, *arguments = operation
            if kind == "goto":
                await page.goto(server.origin + arguments[0], wait_until="load")
                continue
            locator = page.locator(f'[data-rg="{arguments[0]}"]')
            if kind == "click" and arguments[1]:
                async with page.expect_navigation(wait_until="load"):
                    await locator.click()
            elif kind == "click":
                await locator.click()
            elif kind == "fill":
                await locator.fill(arguments[1])
            elif kind == "select":
                await locator.select_option(value=arguments[1])
            elif kind == "check":
                await locator.set_checked(arguments[1])
        times.append(time.perf_counter() - started)
    await context.close()
    await server.close()
    return reset, times


async def _env_reset_unpooled(task_id: str) -> float:
    """An env-equivalent reset without the pool's spare: new context and page, then the page."""
    return (await _raw_episode(task_id, [], pooled=False))[0]


async def chromium(rounds: int) -> dict[str, float]:
    service = get_service()
    recorded = {task_id: await _recorded_operations(task_id) for task_id in CHROMIUM_TASKS}
    # Warm up: launch the browser and fill the pool.
    warm = make_shop_env(_task(CHROMIUM_TASKS[0]), backend="chromium")
    await _oracle_episode(warm)
    await warm.close()
    env_actions: list[float] = []
    raw_actions: list[float] = []
    pooled_resets: list[float] = []
    unpooled_resets: list[float] = []
    for _ in range(rounds):
        for task_id in CHROMIUM_TASKS:
            _, raw_times = await service.call(_raw_episode(task_id, recorded[task_id], pooled=True))
            environment = make_shop_env(_task(task_id), backend="chromium")
            _, reset, env_times = await _oracle_episode(environment)
            await environment.close()
            assert len(raw_times) == len(env_times)
            raw_actions.extend(raw_times)
            env_actions.extend(env_times)
            pooled_resets.append(reset)
            unpooled_resets.append(await service.call(_env_reset_unpooled(task_id)))
            await asyncio.sleep(0.3)  # let the pool prepare its spare, as between real episodes
    return {
        "env_action": statistics.median(env_actions),
        "raw_action": statistics.median(raw_actions),
        "env_action_mean": statistics.fmean(env_actions),
        "raw_action_mean": statistics.fmean(raw_actions),
        "pooled_reset": statistics.median(pooled_resets),
        "unpooled_reset": statistics.median(unpooled_resets),
        "actions": len(env_actions),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds over the chromium tasks")
    parser.add_argument("--dom-seconds", type=float, default=3.0, help="seconds of dom stepping")
    parser.add_argument("--skip-chromium", action="store_true")
    options = parser.parse_args()

    rate = asyncio.run(dom_steps_per_second(options.dom_seconds))
    print(f"dom backend: {rate:,.0f} steps/s ({rate / 2000:.2f}x the 2,000 steps/s target)")
    if options.skip_chromium:
        return
    try:
        figures = asyncio.run(chromium(options.rounds))
    finally:
        shutdown_browser()
    ratio = figures["env_action"] / figures["raw_action"]
    mean_ratio = figures["env_action_mean"] / figures["raw_action_mean"]
    print(
        f"chromium per action ({figures['actions']} actions): env {figures['env_action'] * 1000:.1f} ms vs raw "
        "Playwright "
        f"{figures['raw_action'] * 1000:.1f} ms (median) -> {ratio:.2f}x; means "
        f"{figures['env_action_mean'] * 1000:.1f} vs "
        f"{figures['raw_action_mean'] * 1000:.1f} ms -> {mean_ratio:.2f}x (target <= 1.2x)"
    )
    print(
        f"chromium reset: pooled {figures['pooled_reset']:.3f} s (target <= 0.5 s) vs a fresh context per episode "
        f"{figures['unpooled_reset']:.3f} s -> {figures['pooled_reset'] / figures['unpooled_reset']:.2f}x (median)"
    )


if __name__ == "__main__":
    main()
