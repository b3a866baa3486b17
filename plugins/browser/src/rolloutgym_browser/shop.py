"""``browser/shop-v0``: a small local web shop and its tasks.

The tasks and their ground truth live in ``shop_tasks.json`` next to this module. It is
generated, never edited by hand: ``python -m rolloutgym_browser.shop`` replays every
reference solution (``_shop_tasks.py``) on a fresh site with the ``dom`` backend and
stores the resulting server-side state as the task's expected end state.
"""

from __future__ import annotations

import asyncio
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from ._shop_site import ShopSite
from .envs import BrowserEnv, BrowserTask

__all__ = ["SHOP_DESCRIPTION", "build_tasks", "make_shop_env", "shop_tasks"]

TASK_FILE = Path(__file__).with_name("shop_tasks.json")
SHOP_DESCRIPTION = (
    "You are signed in as Sam Rivera. Prices are in US dollars. Coupon codes and shipping options are "
    "chosen at checkout."
)


def _task_from_record(record: dict[str, Any]) -> BrowserTask:
    return BrowserTask(
        id=record["id"],
        split=record["split"],
        instruction=record["instruction"],
        start_url=record["start_url"],
        setup=record["setup"],
        expected_state=record["expected_state"],
        answer=record["answer"],
        oracle=tuple(record["oracle"]),
        skills=tuple(record["skills"]),
    )


@cache
def _load() -> tuple[BrowserTask, ...]:
    records = json.loads(TASK_FILE.read_text(encoding="utf-8"))
    return tuple(_task_from_record(record) for record in records["tasks"])


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


async def _replay(definition: Any) -> dict[str, Any]:
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


def build_tasks() -> dict[str, Any]:
    """Replay every reference solution and return the task file's content."""
    from ._shop_tasks import TASK_DEFINITIONS

    tasks = []
    for definition in TASK_DEFINITIONS:
        state = asyncio.run(_replay(definition))
        tasks.append(
            {
                "id": definition.id,
                "split": definition.split,
                "skills": list(definition.skills),
                "instruction": definition.instruction,
                "start_url": definition.start_url,
                "setup": definition.setup,
                "oracle": list(definition.oracle),
                "answer": definition.answer,
                "expected_state": state,
            }
        )
    return {"env": "browser/shop-v0", "generated_by": "python -m rolloutgym_browser.shop", "tasks": tasks}


def main() -> None:
    """Regenerate ``shop_tasks.json`` (``--check`` only compares)."""
    content = json.dumps(build_tasks(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"
    if "--check" in sys.argv[1:]:
        current = TASK_FILE.read_text(encoding="utf-8") if TASK_FILE.exists() else ""
        if current != content:
            sys.exit(f"{TASK_FILE} is out of date; run python -m rolloutgym_browser.shop (and bump the env version)")
        print("shop_tasks.json is up to date")
        return
    TASK_FILE.write_text(content, encoding="utf-8")
    print(f"wrote {TASK_FILE} ({len(json.loads(content)['tasks'])} tasks)")


if __name__ == "__main__":
    main()
