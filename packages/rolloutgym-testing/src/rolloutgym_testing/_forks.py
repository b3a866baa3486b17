"""The conformance kit's fork check: forks continue like the original and share nothing.

For an env whose spec says ``forkable=True``: replay the oracle's actions up to the middle of
the episode, fork three times, step one fork with the null action (a different branch), then
continue the original, a second fork, and a fresh env restored from the third fork's state
read back from JSON text with the oracle's remaining actions. All three must give the
observations, rewards and flags of an unforked reference episode.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from rolloutgym_protocol import EnvState, afork, as_async, asnapshot, can_fork, to_jsonable
from rolloutgym_protocol.forking import arestore

__all__ = ["check_fork", "check_refuses_fork"]


def _comparable(outcome: tuple[Any, ...]) -> str:
    observation, reward, terminated, truncated = outcome[:4]
    return json.dumps(to_jsonable([observation, reward, terminated, truncated]), sort_keys=True, default=repr)


async def _steps(env: Any, actions: Sequence[Any]) -> list[str]:
    return [_comparable(await env.step(action)) for action in actions]


async def _close(env: Any) -> None:
    result = env.close()
    if inspect.isawaitable(result):
        await result


async def check_refuses_fork(env: Any) -> None:
    """An env that cannot fork says so with ``NotForkable`` (one line), not with a traceback or a bad copy."""
    from rolloutgym_protocol.errors import NotForkable

    try:
        await afork(as_async(env))
    except NotForkable as exc:
        assert "\n" not in str(exc), f"NotForkable's message is not one line: {exc}"
    else:
        raise AssertionError(f"{type(env).__name__}: can_fork() is False but fork() did not raise NotForkable")


async def check_fork(make: Callable[[], Any], actions: Sequence[Any], null_action: Any, seed: int | None) -> None:
    """Raise ``AssertionError`` naming the first way a fork differs from the unforked episode."""
    opened: list[Any] = []

    async def fresh() -> Any:
        env = as_async(make())
        opened.append(env)
        await env.reset(seed=seed)
        return env

    try:
        reference = await _steps(await fresh(), actions)
        middle = len(actions) // 2
        env = await fresh()
        assert can_fork(env), "the spec says forkable=True but the env does not implement ForkableEnv"
        await _steps(env, actions[:middle])
        diverging, twin, stored = await afork(env, 3)
        opened += [diverging, twin, stored]
        text = (await asnapshot(stored)).to_json()
        await diverging.step(null_action)  # another branch: must not reach env, twin or stored
        restored = await fresh()
        await arestore(restored, EnvState.from_json(text))
        for name, branch in (("the original", env), ("a fork", twin), ("an env restored from JSON", restored)):
            outcomes = await _steps(branch, actions[middle:])
            for index, (got, expected) in enumerate(zip(outcomes, reference[middle:], strict=True)):
                assert got == expected, (
                    f"after forking at step {middle}, {name} differs at step {middle + index} "
                    f"from the unforked episode:\n  got      {got[:300]}\n  expected {expected[:300]}"
                )
    finally:
        for env in opened:
            await _close(env)
