"""Episodes of the check: one policy on one task, with the env's exception kept as data."""

from __future__ import annotations

import inspect
import random
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.display import safe_str

from ..rollouts import Trajectory, aclose_env, arollout, bind_policy
from ..sources import ResolvedEnv

__all__ = ["Episode", "EpisodeRunner", "sample_indices"]

DEFAULT_TIMEOUT = 300.0  # seconds per episode when the env declares none


@dataclass
class Episode:
    """One episode's outcome: the trajectory, or the error that ended it (an env that raised)."""

    task: str
    trajectory: Trajectory | None
    error: str | None = None
    policy_error: BaseException | None = None  # the policy (a probe) raised, not the env

    @property
    def score(self) -> float:
        """The episode's score; an episode that raised scores nothing (``-inf``: never above a floor)."""
        if self.trajectory is None:
            return float("-inf")
        return float(self.trajectory.score.value)

    def shown(self) -> str:
        return f"error ({self.error})" if self.error else f"{self.score:g}"


def sample_indices(total: int, sample: int | None, seed: int) -> list[int]:
    """Indices of the tasks to check: all when ``sample`` is None or covers them, else a seeded sample in order."""
    if sample is None or sample >= total:
        return list(range(total))
    return sorted(random.Random(seed).sample(range(total), sample))


class EpisodeRunner:
    """Runs policies on tasks of a resolved env, one fresh env per episode."""

    def __init__(self, resolved: ResolvedEnv, *, max_steps: int | None = None, timeout: float | None = None) -> None:
        self.resolved = resolved
        self.max_steps = max_steps if max_steps is not None else resolved.max_steps
        self.timeout = timeout if timeout is not None else (resolved.timeout or DEFAULT_TIMEOUT)

    def task_id(self, index: int) -> str:
        return str(self.resolved.task_ids[index]) if self.resolved.task_ids else str(index)

    async def run(self, policy: Any, index: int, *, seed: int | None = 0) -> Episode:
        """Roll ``policy`` out once on task ``index``; an exception becomes :attr:`Episode.error`."""
        task = self.task_id(index)
        try:
            environment = self.resolved.make_task(index)
            if inspect.isawaitable(environment):  # a session of a served env opens when awaited
                environment = await environment
        except Exception as exc:  # an env that cannot be built for this task is a finding, not a crash of the check
            return Episode(task, None, f"making the env raised {type(exc).__name__}: {safe_str(exc)[:300]}")
        watched = _Watched(policy)
        try:
            trajectory = await arollout(environment, watched, seed=seed, max_steps=self.max_steps, timeout=self.timeout)
            return Episode(task, trajectory)
        except Exception as exc:
            return Episode(task, None, f"{type(exc).__name__}: {safe_str(exc)[:300]}", watched.error)
        finally:
            try:
                await aclose_env(environment)
            except Exception:  # noqa: S110 - closing after a failed episode; the failure is already recorded
                pass


class _Watched:
    """A policy wrapper that remembers an exception the policy itself raised (so the env is not blamed)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.error: BaseException | None = None

    def for_env(self, environment: Any) -> Any:
        try:
            act = bind_policy(self.policy, environment)
        except Exception as exc:
            self.error = exc
            raise

        async def watched(observation: Any) -> Any:
            try:
                action = act(observation)
                return await action if inspect.isawaitable(action) else action
            except Exception as exc:
                self.error = exc
                raise

        return watched
