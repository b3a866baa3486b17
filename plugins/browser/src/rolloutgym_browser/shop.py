"""``browser/shop-v0``: a small local web shop and its tasks.

The tasks live in ``data/shop_tasks.jsonl``, one task per line (read by ``_data_files``).
A task's expected end state is not written by hand: ``python -m rolloutgym_browser.shop``
replays every task's reference solution (``oracle``) on a fresh site with the ``dom``
backend and stores the resulting server-side state; ``--check`` only compares.
"""

from __future__ import annotations

import asyncio
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from ._data_files import ShopTaskRecord, shop_task_records
from ._shop_site import ShopSite
from ._task import BrowserTask
from .envs import BrowserEnv

__all__ = ["SHOP_DESCRIPTION", "build_tasks", "make_shop_env", "shop_tasks"]

TASK_FILE = Path(__file__).with_name("data") / "shop_tasks.jsonl"
SHOP_DESCRIPTION = (
    "You are signed in as Sam Rivera. Prices are in US dollars. Coupon codes and shipping options are "
    "chosen at checkout."
)


def _task_from_record(record: ShopTaskRecord) -> BrowserTask:
    return BrowserTask(
        id=record.id,
        split=record.split,
        instruction=record.instruction,
        start_url=record.start_url,
        setup=record.setup,
        expected_state=record.expected_state,
        answer=record.answer,
        oracle=record.oracle,
        skills=record.skills,
    )


@cache
def _load() -> tuple[BrowserTask, ...]:
    return tuple(_task_from_record(record) for record in shop_task_records())


def shop_tasks() -> list[BrowserTask]:
    """The tasks of ``browser/shop-v0`` (splits in the data)."""
    return list(_load())


def make_shop_env(task: BrowserTask | None = None, **kwargs: Any) -> BrowserEnv:
    """A ``browser/shop-v0`` environment for ``task``.

    Keyword arguments go to :class:`~rolloutgym_browser.BrowserEnv`: ``backend="chromium"``,
    ``screenshot=True``, ``viewport=40``, ``chromium_path=...``.
    """
    return BrowserEnv(
        ShopSite(), task or shop_tasks()[0], name="Harbor & Pine, a web shop", description=SHOP_DESCRIPTION, **kwargs
    )


async def _replay(definition: ShopTaskRecord) -> dict[str, Any]:
    provisional = BrowserTask(
        id=definition.id,
        split=definition.split,
        instruction=definition.instruction,
        start_url=definition.start_url,
        setup=definition.setup,
        answer=definition.answer if definition.answer is not None else "",
        oracle=definition.oracle,
    )
    environment = BrowserEnv(ShopSite(), provisional)
    try:
        await environment.reset(seed=0)
        info: dict[str, Any] = {}
        for _ in range(len(definition.oracle) + 1):
            _, _, terminated, _, info = await environment.step(environment.oracle_action())
            if info.get("invalid_actions"):
                raise RuntimeError(f"task {definition.id}: the reference solution made an invalid action: {info}")
            if info.get("page_errors"):
                raise RuntimeError(
                    f"task {definition.id}: the reference solution hit page errors: {info['page_errors']}"
                )
            if terminated:
                break
        else:
            raise RuntimeError(f"task {definition.id}: the reference solution did not end the episode")
        return dict(info["state"])
    finally:
        await environment.close()


def build_tasks() -> list[dict[str, Any]]:
    """Every task of the data file, its ``expected_state`` replaced by the replay of its reference solution."""
    tasks = []
    for record in shop_task_records():
        tasks.append({**record.model_dump(mode="json"), "expected_state": asyncio.run(_replay(record))})
    return tasks


def main() -> None:
    """Rewrite the expected end states in ``data/shop_tasks.jsonl`` (``--check`` only compares)."""
    content = "".join(json.dumps(task, ensure_ascii=False) + "\n" for task in build_tasks())
    if "--check" in sys.argv[1:]:
        if TASK_FILE.read_text(encoding="utf-8") != content:
            sys.exit(
                f"{TASK_FILE}: an expected_state is not the replay of its task's oracle; run "
                "python -m rolloutgym_browser.shop to rewrite them (and bump the env version)"
            )
        print(f"{TASK_FILE.name} is up to date")
        return
    TASK_FILE.write_text(content, encoding="utf-8")
    print(f"wrote {TASK_FILE} ({len(content.splitlines())} tasks)")


if __name__ == "__main__":
    main()
