"""The driver's view of an env instance that lives in a Ray worker (driver-side policies).

:class:`LeasedEnv` (an instance leased from a worker; not :class:`rolloutgym.serve.RemoteEnv`, the
client of ``rolloutgym serve``) is an :class:`AsyncEnv` whose ``reset``/``step``/``close`` are calls to
the worker holding the instance, so the ordinary rollout loop runs on the driver with the
driver's policy (an API client, a human, a replay file). It carries the spaces, ``tools``
and task id of the real env, which is what chat policies read through ``for_env``.
"""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import AsyncEnv

from ._ray_worker import RunSpec

__all__ = ["LeasedEnv", "result_of"]


async def result_of(reference: Any) -> Any:
    """Await a Ray call; an exception raised by the env comes back as itself."""
    from ray.exceptions import RayTaskError

    try:
        return await reference
    except RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise


class LeasedEnv(AsyncEnv[Any, Any]):
    """An env instance leased from a worker; ``close()`` hands it back to the worker's pool.

    An instance whose episode raised, or was cancelled mid-call, is closed by the worker
    instead of being reused.
    """

    def __init__(self, worker: Any, lease: int, description: dict[str, Any], releases: list[Any] | None = None) -> None:
        self.worker = worker
        self.releases = releases
        self.lease = lease
        self.action_space = description["action_space"]
        self.observation_space = description["observation_space"]
        if description.get("tools") is not None:
            self.tools = description["tools"]
        self.rolloutgym_task_id = description.get("rolloutgym_task_id")
        self.rolloutgym_env_id = description.get("rolloutgym_env_id")
        self._healthy = True
        self._closed = False
        self._first_reset: tuple[tuple[Any, Any], Any] | None = None

    @classmethod
    async def open(
        cls,
        worker: Any,
        spec: RunSpec,
        task_index: int,
        releases: list[Any] | None = None,
        reset: tuple[int | None, dict[str, Any] | None] | None = None,
    ) -> LeasedEnv:
        """Lease an instance of task ``task_index``.

        With ``releases``, ``close()`` does not wait for the worker: it appends the pending
        call there, for the caller to await once. With ``reset=(seed, options)`` the worker
        resets the instance right away and the first matching :meth:`reset` returns (or
        raises) that outcome without another call. Both save a round trip per episode.
        """
        lease, description, outcome = await result_of(worker.open_env.remote(spec, task_index, reset))
        environment = cls(worker, lease, description, releases)
        if reset is not None:
            environment._first_reset = (reset, outcome)
        return environment

    async def _call(self, reference: Any) -> Any:
        try:
            return await result_of(reference)
        except BaseException:
            self._healthy = False
            raise

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        first, self._first_reset = self._first_reset, None
        if first is not None and first[0] == (seed, options):
            outcome = first[1]
            if isinstance(outcome, BaseException):
                self._healthy = False
                raise outcome
            return outcome  # type: ignore[no-any-return]
        return await self._call(self.worker.reset_env.remote(self.lease, seed, options))  # type: ignore[no-any-return]

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        result, released = await self._call(self.worker.step_env.remote(self.lease, action))
        if released:  # the worker took the instance back when the episode ended
            self._closed = True
        return result  # type: ignore[no-any-return]

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        from ._ray_pool import WORKER_LOST

        reference = self.worker.release_env.remote(self.lease, self._healthy)
        if self.releases is not None:
            self.releases.append(reference)
            return
        try:
            await result_of(reference)
        except WORKER_LOST:  # the worker is gone, and its envs with it
            pass

    def __repr__(self) -> str:
        return f"<LeasedEnv {self.rolloutgym_env_id or ''} task {self.rolloutgym_task_id} lease {self.lease}>"
