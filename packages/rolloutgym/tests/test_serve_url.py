"""Env URLs: ``rolloutgym.make(URL)`` and ``rolloutgym run URL`` against a real ``rolloutgym serve``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.serve import AsyncRemoteEnv, RemoteEnv, ServerProcess

GUESS = "toy/guess-v0"


@pytest.fixture(scope="module")
def server() -> Any:
    with ServerProcess([GUESS, "workflow/refund-v0"]) as running:
        yield running


def test_make_with_a_url_behaves_like_the_local_env(server: ServerProcess) -> None:
    environment = rg.make(server.url(GUESS), task=3)
    local = rg.make(GUESS, task=3)
    try:
        assert isinstance(environment, RemoteEnv)  # the served env is sync, so is its stand-in
        assert environment.rolloutgym_task_id == local.rolloutgym_task_id == "guess-03"
        assert environment.action_space == local.action_space and environment.tools == local.tools
        assert environment.reset(seed=0) == local.reset(seed=0)
        action = local.oracle_action()
        assert environment.oracle_action() == action
        assert environment.step(action) == local.step(action)
    finally:
        environment.close()
    asynchronous = rg.make_async(server.url(GUESS), task="guess-04")
    assert isinstance(asynchronous, AsyncRemoteEnv)

    async def first_observation() -> Any:
        try:
            return (await asynchronous.reset(seed=1))[0]
        finally:
            await asynchronous.close()

    assert asyncio.run(first_observation()) == rg.make(GUESS, task=4).reset(seed=1)[0]


def _comparable(path: Path) -> list[Any]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, groups = lines[0], lines[1:]
    for key in ("run_id", "created_at"):
        header.pop(key)
    header["env"].pop("source")
    header["options"].pop("executor", None)
    for group in groups:
        for trajectory in group.get("group", group).get("trajectories", []):
            trajectory["metadata"].pop("elapsed_seconds", None)
    # Groups are written as they finish, so their order in the file depends on timing.
    return [header, *sorted(groups, key=lambda group: group.get("task_index", -1))]


def test_run_with_a_url_writes_the_local_run_file(server: ServerProcess, tmp_path: Path) -> None:
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    arguments = ["--policy", "oracle", "-n", "2", "--limit", "3", "--seed", "5", "--quiet"]
    assert main(["run", "workflow/refund-v0", *arguments, "--out", str(local)]) == 0
    assert main(["run", server.url("workflow/refund-v0"), *arguments, "--out", str(remote)]) == 0
    assert json.loads(remote.read_text().splitlines()[0])["env"]["source"] == server.url("workflow/refund-v0")
    assert _comparable(remote) == _comparable(local)


def test_server_killed_mid_run_then_resume_completes(tmp_path: Path) -> None:
    """Members in flight when the server dies fail with RemoteEnvError; --resume on a restarted server finishes it."""
    from rolloutgym.builtin.policies import OraclePolicy
    from rolloutgym.runs import read_run

    out = tmp_path / "run.jsonl"
    first = ServerProcess([GUESS]).start()
    url = first.url(GUESS)

    class KillingOracle:
        """The oracle, except that its 8th move kills the env server."""

        def __init__(self) -> None:
            self.moves = 0
            self.oracle = OraclePolicy()

        def for_env(self, environment: Any) -> Any:
            act = self.oracle.for_env(environment)

            def move(observation: Any) -> Any:
                self.moves += 1
                if self.moves == 8:
                    first.kill()
                return act(observation)

            return move

    try:
        result = rg.run(url, policy="oracle", policy_object=KillingOracle(), limit=6, concurrency=1, out=str(out))
    finally:
        first.stop()
    errors = [error for group in result.groups for error in group.errors]
    assert errors and all(error.error_type == "RemoteEnvError" for error in errors), errors
    with ServerProcess([GUESS], port=first.port):
        resumed = rg.run(url, policy="oracle", limit=6, concurrency=1, out=str(out), resume=True)
    assert len(resumed.groups) == 6
    assert all(not group.errors and min(group.rewards) == 1.0 for group in resumed.groups)
    assert len(read_run(out).groups) >= 6
