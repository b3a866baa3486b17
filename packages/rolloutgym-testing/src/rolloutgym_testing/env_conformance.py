"""``EnvConformanceTests``: the tests every environment plugin runs on its envs.

Subclass it in a test module and set ``env_id``; pytest collects the inherited tests::

    class TestGuess(EnvConformanceTests):
        env_id = "toy/guess-v0"
        max_tasks = None          # every shipped task (the default)

Checks: registration and spec shape, the Gymnasium value contract (``check_env`` /
``check_async_env``), seeding determinism, run-file JSON round trip, idempotent close,
the ``oracle`` policy reaching ``max_score`` and the ``null`` policy ``min_score`` on
every task, forking (an env whose spec says ``forkable=True`` forks mid-episode into envs
that continue exactly like it and share nothing with it or each other; any other env says
why not in ``EnvSpec.fork_note``), and no leaked threads, child processes or temp files.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from rolloutgym_protocol import AsyncEnv, Trajectory, TrajectoryGroup, check_async_env, check_env

from ._leaks import LeakSnapshot

__all__ = ["EnvConformanceTests", "run_episode"]


async def _close(environment: Any) -> None:
    result = environment.close()
    if inspect.isawaitable(result):
        await result


def run_episode(
    env_id: str,
    policy: str | Any,
    *,
    task: Any = None,
    seed: int | None = 0,
    max_steps: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    registry: Any = None,
) -> Trajectory:
    """Make the env for ``task``, roll out ``policy`` once (sync or async env), close it."""
    from rolloutgym.registry import get_registry
    from rolloutgym.rollouts import arollout

    registry = registry or get_registry()
    spec = registry.resolve_env(env_id).spec
    chosen = registry.make_policy(policy) if isinstance(policy, str) else policy
    budget = max_steps if max_steps is not None else spec.max_steps

    async def episode() -> Trajectory:
        environment = registry.make(spec.id, task=task, **(env_kwargs or {}))
        try:
            return await arollout(environment, chosen, seed=seed, max_steps=budget)
        finally:
            await _close(environment)

    return asyncio.run(episode())


class EnvConformanceTests:
    """Inherit in a ``Test*`` class and set :attr:`env_id`."""

    env_id: ClassVar[str]
    env_kwargs: ClassVar[dict[str, Any]] = {}
    max_score: ClassVar[float] = 1.0
    min_score: ClassVar[float] = 0.0
    max_tasks: ClassVar[int | None] = None
    null_exempt_tasks: ClassVar[Sequence[str]] = ()
    seed: ClassVar[int] = 0
    check_temp_files: ClassVar[bool] = True
    # The report card (``rolloutgym check``) as a test: opt in with ``check_card = True``.
    check_card: ClassVar[bool] = False
    check_sample: ClassVar[int | None] = 3
    check_waivers: ClassVar[dict[str, str]] = {}
    check_skip: ClassVar[Sequence[str]] = ("signal",)

    # -- helpers ------------------------------------------------------------------

    def registry(self) -> Any:
        from rolloutgym.registry import get_registry

        return get_registry()

    def task_ids(self) -> list[str]:
        from rolloutgym.registry import task_id

        items = self.registry().tasks(self.env_id)
        ids = [task_id(item, index) for index, item in enumerate(items)] or [None]
        return ids if self.max_tasks is None else ids[: self.max_tasks]

    def episode(self, policy: str | Any, task: Any, *, seed: int | None = None) -> Trajectory:
        return run_episode(
            self.env_id,
            policy,
            task=task,
            seed=self.seed if seed is None else seed,
            env_kwargs=dict(self.env_kwargs),
            registry=self.registry(),
        )

    def make(self, task: Any = None) -> Any:
        return self.registry().make(self.env_id, task=task, **self.env_kwargs)

    # -- tests --------------------------------------------------------------------

    def test_registered(self) -> None:
        registered = self.registry().resolve_env(self.env_id)
        spec = registered.spec
        assert spec.id == self.env_id, f"'{self.env_id}' resolved to '{spec.id}'"
        assert spec.description, f"{spec.id}: give the EnvSpec a description"
        items = self.registry().tasks(self.env_id)
        if spec.splits:
            from rolloutgym.registry import task_split

            unknown = {task_split(item) for item in items} - set(spec.splits)
            assert not unknown, (
                f"{spec.id}: tasks use splits {sorted(map(str, unknown))} not declared in EnvSpec.splits"
            )
        from rolloutgym.registry import task_id

        ids = [task_id(item, index) for index, item in enumerate(items)]
        assert len(ids) == len(set(ids)), f"{spec.id}: task ids are not unique"

    def test_api_contract(self) -> None:
        task = self.task_ids()[0]
        environment = self.make(task)
        from rolloutgym.builtin.policies import OraclePolicy

        action = OraclePolicy().for_env(environment)
        try:
            if isinstance(environment, AsyncEnv):

                async def check() -> None:
                    observation, _ = await environment.reset(seed=self.seed)
                    first = action(observation)
                    if inspect.isawaitable(first):
                        first = await first
                    await check_async_env(environment, seed=self.seed, action=first)
                    await environment.close()

                asyncio.run(check())
            else:
                observation, _ = environment.reset(seed=self.seed)
                check_env(environment, seed=self.seed, action=action(observation))
        finally:
            if not isinstance(environment, AsyncEnv):
                environment.close()

    def test_seeding_determinism(self) -> None:
        task = self.task_ids()[0]
        first = self.episode("oracle", task, seed=self.seed)
        second = self.episode("oracle", task, seed=self.seed)
        drop = ("elapsed_seconds",)
        a, b = first.to_dict(), second.to_dict()
        for data in (a, b):
            for key in drop:
                data["metadata"].pop(key, None)
        assert _normalised(a) == _normalised(b), "two oracle episodes with the same seed differ"

    def test_json_round_trip(self, tmp_path: Path) -> None:
        from rolloutgym.runs import RunWriter, read_run

        task = self.task_ids()[0]
        trajectory = self.episode("oracle", task)
        group = TrajectoryGroup(None, str(task), (trajectory,))
        encoded = json.loads(json.dumps(group.to_dict()))
        assert TrajectoryGroup.from_dict(encoded).to_dict() == encoded, (
            "TrajectoryGroup JSON round trip changed the data"
        )
        header = {
            "kind": "header",
            "format_version": 1,
            "run_id": "conformance",
            "created_at": "2026-01-01T00:00:00+00:00",
            "env": {"id": self.env_id},
            "policy": "oracle",
            "num_rollouts": 1,
            "tasks": [str(task)],
            "task_indices": [0],
        }
        path = tmp_path / "run.jsonl"
        with RunWriter(path, header) as writer:
            writer.write_group(0, group)
        assert read_run(path).groups[0].to_dict() == encoded

    def test_close_is_idempotent(self) -> None:
        environment = self.make(self.task_ids()[0])
        if isinstance(environment, AsyncEnv):

            async def twice() -> None:
                await environment.reset(seed=self.seed)
                await environment.close()
                await environment.close()

            asyncio.run(twice())
        else:
            environment.reset(seed=self.seed)
            environment.close()
            environment.close()

    def test_oracle_scores_max(self) -> None:
        failures = []
        for task in self.task_ids():
            trajectory = self.episode("oracle", task)
            score = trajectory.score
            if score.value < self.max_score:
                failures.append(f"{task}: {score.value:g} ({score.feedback or _component_feedback(score)})")
        assert not failures, f"the oracle did not reach {self.max_score} on {len(failures)} task(s):\n" + "\n".join(
            failures
        )

    def test_null_scores_min(self) -> None:
        failures = []
        for task in self.task_ids():
            if task in self.null_exempt_tasks:
                continue
            trajectory = self.episode("null", task)
            if trajectory.score.value > self.min_score:
                failures.append(f"{task}: {trajectory.score.value:g}")
        assert not failures, f"the null policy scored above {self.min_score} on {len(failures)} task(s):\n" + "\n".join(
            failures
        )

    def test_fork(self) -> None:
        spec = self.registry().resolve_env(self.env_id).spec
        task = self.task_ids()[0]
        if not spec.forkable:
            if not spec.fork_note:
                pytest.skip(
                    f"{spec.id} does not fork: implement rolloutgym_protocol.ForkableEnv and declare "
                    "EnvSpec(forkable=True), or say why not in EnvSpec.fork_note"
                )
            return
        from rolloutgym.builtin.policies import NullPolicy
        from rolloutgym_protocol import can_fork

        from ._forks import check_fork, check_refuses_fork

        probe = self.make(task)
        try:
            if not can_fork(probe):  # forkable in other configurations (e.g. another backend)
                assert spec.fork_note, f"{spec.id}: this env cannot fork; say when it can in EnvSpec.fork_note"
                asyncio.run(check_refuses_fork(probe))
                return
            null_action = NullPolicy().for_env(probe)(None)
        finally:
            asyncio.run(_close(probe))
        actions = [step.action for step in self.episode("oracle", task).steps]
        if inspect.isawaitable(null_action):
            null_action = asyncio.run(null_action)
        asyncio.run(check_fork(lambda: self.make(task), actions, null_action, self.seed))

    def test_report_card(self) -> None:
        """``rolloutgym check`` on a seeded sample: ceiling, floor, determinism, hack probe, lint, containment."""
        if not self.check_card:
            import pytest

            pytest.skip("the report card is opt-in: set check_card = True (and check_waivers for known failures)")
        from rolloutgym.checks import ALL_CHECKS

        from .check_plugin import assert_env_passes

        assert_env_passes(
            self.env_id,
            sample=self.check_sample,
            seed=self.seed,
            checks=[name for name in ALL_CHECKS if name not in self.check_skip],
            max_score=self.max_score,
            min_score=self.min_score,
            null_exempt=self.null_exempt_tasks,
            waivers=self.check_waivers,
            env_kwargs=self.env_kwargs,
            registry=self.registry(),
        )

    def test_no_leaks(self) -> None:
        for task in self.task_ids()[:2]:  # warm caches (imports, pools) before measuring
            self.episode("oracle", task)
        before = LeakSnapshot.take()
        # A private temp dir, so files other processes create in /tmp don't count.
        private = tempfile.mkdtemp(prefix="rolloutgym-leakcheck-")
        saved_env, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
        os.environ["TMPDIR"], tempfile.tempdir = private, private
        try:
            for task in self.task_ids()[:3]:
                self.episode("oracle", task)
                self.episode("null", task)
            problems = LeakSnapshot.take().leaks_since(before, temp_dir=private)
        finally:
            tempfile.tempdir = saved_tempdir
            if saved_env is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved_env
            left = sorted(os.listdir(private))
            shutil.rmtree(private, ignore_errors=True)
        if not self.check_temp_files:
            problems = [problem for problem in problems if not problem.startswith("temp files")]
        assert not problems, (
            f"{self.env_id} leaked resources: "
            + "; ".join(problems)
            + (f" (temp entries: {left[:10]})" if left else "")
        )


def _component_feedback(score: Any) -> str:
    parts = [
        f"{name}: {child.feedback}" for name, child in score.components.items() if child.feedback and child.value < 1
    ]
    return "; ".join(parts) or "no feedback"


def _normalised(data: Any) -> Any:
    return json.loads(json.dumps(data, sort_keys=True, default=repr))
