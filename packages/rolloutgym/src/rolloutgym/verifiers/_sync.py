"""Calling a policy synchronously from inside a synchronous ``step`` (the llm judge)."""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any

__all__ = ["call_policy"]


def _resolve(value: Any) -> Any:
    if not inspect.isawaitable(value):
        return value
    result: dict[str, Any] = {}

    async def wait() -> Any:
        return await value

    def run() -> None:
        try:
            result["value"] = asyncio.run(wait())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, name="rolloutgym-judge")
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def call_policy(policy: Any, observation: Any) -> Any:
    """Call ``policy(observation)`` (sync or async) and return the action (unwrapping PolicyOutput)."""
    value = _resolve(policy(observation))
    action = getattr(value, "action", value)
    return action
