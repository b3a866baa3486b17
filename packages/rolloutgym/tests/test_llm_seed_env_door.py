"""A NeMo-RL-style batched env registered like any env: ``rolloutgym run`` and ``rolloutgym serve``.

The plugin is a real installed distribution (a dist-info with an entry point on
``PYTHONPATH`` in tmp_path); its env is an ``EnvironmentInterface`` made a registered env by
``batched_env_factory`` (the registry's one env builder calls it per episode).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.serve import ServerProcess

PLUGIN = '''
from rolloutgym_protocol import EnvSpec, hookimpl
from rolloutgym.llm.environments import EnvironmentInterface, EnvironmentReturn, batched_env_factory


class ExpectEnvironment(EnvironmentInterface):
    """One turn: the reply must be extra_env_info['expected'] (the null policy's '' passes the even ones)."""

    def step(self, message_log_batch, metadata):
        with open(__file__ + ".calls", "a") as calls:
            calls.write(f"{len(message_log_batch)}\\n")
        rewards = [
            1.0 if log[-1]["content"].strip() == info["expected"] else 0.0
            for log, info in zip(message_log_batch, metadata)
        ]
        observations = [{"role": "environment", "content": "right" if r else "wrong"} for r in rewards]
        count = len(rewards)
        return EnvironmentReturn(observations, metadata, [None] * count, rewards, [True] * count)

    def global_post_process_and_metrics(self, batch):
        return batch, {}


expect_env = batched_env_factory(ExpectEnvironment)


def samples():
    return [
        {
            "id": f"q{index}",
            "message_log": [{"role": "user", "content": f"Question {index}: answer with nothing or x."}],
            "extra_env_info": {"expected": "" if index % 2 == 0 else "x"},
        }
        for index in range(4)
    ]


@hookimpl
def rolloutgym_envs():
    return [
        EnvSpec(
            id="nemo/expect-v0",
            entry_point="rolloutgym_nemo_demo:expect_env",
            tasks="rolloutgym_nemo_demo:samples",
            description="A NeMo-RL-style batched env.",
        )
    ]
'''

ENV = "nemo/expect-v0"


@pytest.fixture(scope="module")
def plugin_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nemo-plugin")
    (root / "rolloutgym_nemo_demo.py").write_text(textwrap.dedent(PLUGIN))
    dist = root / "rolloutgym_nemo_demo-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rolloutgym-nemo-demo\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[rolloutgym]\nnemo-demo = rolloutgym_nemo_demo\n")
    return root


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, env=environment, timeout=120
    )


def test_rolloutgym_run_and_show_a_batched_env(plugin_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    run = _cli(plugin_root, "run", ENV, "--policy", "null", "-n", "2", "--concurrency", "8", "-q", "-o", str(out))
    assert run.returncode == 0, run.stderr
    groups = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    rewards = {g["item_id"]: [t["steps"][-1]["reward"] for t in g["trajectories"]] for g in groups}
    assert rewards == {"q0": [1.0, 1.0], "q1": [0.0, 0.0], "q2": [1.0, 1.0], "q3": [0.0, 0.0]}
    calls = [int(n) for n in (plugin_root / "rolloutgym_nemo_demo.py.calls").read_text().split()]
    assert sum(calls) == 8 and max(calls) > 1  # concurrent episodes share batched step calls
    show = _cli(plugin_root, "show", str(out))
    assert show.returncode == 0, show.stderr
    assert "50.0%" in show.stdout and ENV in show.stdout


def test_rolloutgym_serve_a_batched_env(plugin_root: Path) -> None:
    async def episode(url: str) -> tuple[Any, ...]:
        environment: Any = rg.make_async(url, task="q1")  # the served env is async: so is its stand-in
        try:
            observation, _ = await environment.reset(seed=0)
            return observation, *await environment.step({"role": "assistant", "content": "x"})
        finally:
            await environment.close()

    with ServerProcess([ENV], env={"PYTHONPATH": str(plugin_root)}) as server:
        observation, shown, reward, terminated, truncated, info = asyncio.run(episode(server.url(ENV)))
    assert observation == [{"role": "user", "content": "Question 1: answer with nothing or x."}]
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert shown == [{"role": "user", "content": "right"}] and info["extra_env_info"] == {"expected": "x"}
