"""The conformance kit passes against ``rolloutgym serve`` for every shipped env, over the network.

A real ``rolloutgym serve`` process on a free loopback port serves every registered env;
the kit's episodes run through :class:`RemoteEnv` (HTTP) with the tasks the server lists.
A second test checks that an oracle episode through :class:`AsyncRemoteEnv` (WebSocket
and HTTP) records exactly the trajectory of the same episode in process. One task per
env keeps CI time small.
"""

from __future__ import annotations

import asyncio
import copy
import re
from typing import Any

import pytest
from rolloutgym.registry import get_registry, task_id
from rolloutgym.rollouts import arollout
from rolloutgym.serve import AsyncRemoteEnv, RemoteEnv, ServerProcess, env_tasks
from rolloutgym_testing import EnvConformanceTests

# Listing only: collection stays cheap. Not ScienceWorld's envs: a variation's world can differ
# between two processes (the simulator's object order), so a served episode need not equal the
# local one; plugins/benchmarks/tests/test_scienceworld.py covers them.
ENV_IDS = [spec.id for spec in get_registry().envs() if not spec.id.startswith("scienceworld/")]
_UNRUNNABLE: dict[str, str | None] = {}
# Envs whose reference solution does not cover their first task (their own conformance class chooses tasks).
_OWN_TASK_SELECTION = {"browser/miniwob-v0": "plugins/browser/tests"}


def _skip_unless_runnable(env_id: str) -> None:
    """Skip (with the reason) an env that cannot run on this machine (no sandbox, no browser …)."""
    if env_id not in _UNRUNNABLE:
        reason = None
        try:
            environment = get_registry().make(env_id)
            closed = environment.close()
            if asyncio.iscoroutine(closed):
                asyncio.run(closed)
        except Exception as exc:  # noqa: BLE001 - reported as the skip reason
            reason = f"{env_id} cannot run here: {type(exc).__name__}: {exc}"[:300]
        _UNRUNNABLE[env_id] = reason
    if env_id in _OWN_TASK_SELECTION:
        pytest.skip(
            f"{env_id}: the oracle covers only some tasks; its plugin's conformance picks them "
            f"({_OWN_TASK_SELECTION[env_id]})"
        )
    if _UNRUNNABLE[env_id]:
        pytest.skip(_UNRUNNABLE[env_id])


@pytest.fixture(scope="module")
def server() -> Any:
    with ServerProcess(options=["--idle-timeout", "120"]) as running:
        yield running


class _ServedRegistry:
    """The kit's view of the registry, with every env made and every task listed by the server."""

    def __init__(self, base_url: str) -> None:
        self.local = get_registry()
        self.base_url = base_url

    def resolve_env(self, env_id: str) -> Any:
        return self.local.resolve_env(env_id)

    def tasks(self, env_id: str) -> list[Any]:
        return [entry["item"] for entry in env_tasks(f"{self.base_url}/{env_id}")]

    def make(self, env_id: str, *, task: Any = None, **kwargs: Any) -> Any:
        if task is not None and not isinstance(task, (int, str)):
            task = task_id(task, 0)
        return RemoteEnv(f"{self.base_url}/{env_id}", task=task, kwargs=kwargs or None)

    def make_policy(self, reference: str, **options: Any) -> Any:
        return self.local.make_policy(reference, **options)


class _ServedConformance(EnvConformanceTests):
    """The kit through the network, one task per env (32 envs: CI time).

    The oracle and null checks compare with the same episodes in process: thresholds are
    per env in each plugin's own conformance class (e.g. the null policy scores 1 on BFCL
    irrelevance tasks), and those classes hold the envs to them.
    """

    max_tasks = 1

    @pytest.fixture(autouse=True)
    def _serve(self, server: ServerProcess) -> None:
        _skip_unless_runnable(self.env_id)
        self._registry = _ServedRegistry(server.base_url)

    def registry(self) -> Any:
        return self._registry

    def _local_score(self, policy: str, task: Any) -> Any:
        from rolloutgym_testing import run_episode

        return run_episode(self.env_id, policy, task=task, seed=self.seed).score

    def test_oracle_scores_max(self) -> None:
        for task in self.task_ids():
            assert self.episode("oracle", task).score == self._local_score("oracle", task), (
                f"{self.env_id} {task}: the served oracle score differs from in process"
            )

    def test_null_scores_min(self) -> None:
        for task in self.task_ids():
            assert self.episode("null", task).score == self._local_score("null", task), (
                f"{self.env_id} {task}: the served null score differs from in process"
            )

    def test_fork(self) -> None:
        """A served env does not fork yet (the server protocol has no snapshot operation): it says so in one line."""
        from rolloutgym_protocol import forking
        from rolloutgym_protocol.errors import NotForkable

        environment = self.make(self.task_ids()[0])
        try:
            with pytest.raises(NotForkable, match=r"^RemoteEnv cannot fork: [^\n]+$"):
                forking.fork(environment)
        finally:
            environment.close()


# One kit class per shipped env (the kit is a class with a fixed env id).
for _env_id in ENV_IDS:
    _name = "TestServed_" + re.sub(r"\W+", "_", _env_id)
    globals()[_name] = type(_name, (_ServedConformance,), {"env_id": _env_id})


def _comparable(trajectory: Any) -> Any:
    data = trajectory.to_dict()
    data["metadata"].pop("elapsed_seconds", None)
    return data


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_remote_episode_equals_local_episode(server: ServerProcess, env_id: str) -> None:
    _skip_unless_runnable(env_id)
    registry = get_registry()
    oracle = registry.make_policy("oracle")

    async def episodes() -> list[Any]:
        local = registry.make(env_id, task=0)
        # Tools as the env lists them before an episode (bfcl miss-func adds tools mid-episode).
        initial_tools = copy.deepcopy(getattr(local, "tools", None))
        try:
            expected = await arollout(local, oracle, seed=7)
        finally:
            closed = local.close()
            if asyncio.iscoroutine(closed):
                await closed
        found = []
        for transport in ("ws", "http"):
            remote = await AsyncRemoteEnv.open(server.url(env_id), task=0, transport=transport)
            try:
                assert remote.action_space == local.action_space
                assert remote.observation_space == local.observation_space
                assert getattr(remote, "tools", None) == initial_tools
                found.append(await arollout(remote, oracle, seed=7))
            finally:
                await remote.close()
        return [expected, *found]

    expected, over_websocket, over_http = asyncio.run(episodes())
    assert _comparable(over_websocket) == _comparable(expected)
    assert _comparable(over_http) == _comparable(expected)
    assert over_websocket.score == expected.score
