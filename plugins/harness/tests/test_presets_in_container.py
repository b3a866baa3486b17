"""A preset inside the task's own container: ``harness:claude-code`` on a Harbor task run with
``sandbox="docker"`` (podman's Engine API), the real CLI (``@anthropic-ai/claude-code`` at its
pinned version, from the presets' shared install cache) layered on the task's image.

The CLI uses its own ``Bash`` tool in the container's working directory; the endpoint is reached
through its socket folder bound into the container (no network); the task's tests grade the
container's files in a separate verifier container. The model is a scripted token policy (a
``tool_use`` of ``Bash``, then a plain answer); every call is recorded with its token ids.

Cost: the agent layer is built once per install and engine (a minute, about 0.5 GB, cached in
podman's storage like any image); after that the test is one episode. Skipped without podman and
its base image (failed under ``CI=true``), or without node/npm and the registry.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rolloutgym import arollout
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym_code._harbor_task import read_task
from rolloutgym_code.harbor import HarborTaskEnv
from rolloutgym_harness.harness import make_policy
from rolloutgym_harness.presets import PRESETS, cache_root
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_testing.podman import BASE_IMAGE, PodmanService, require_podman

RENDERER = CharRenderer()
TEST_SH = """#!/bin/bash
if [ "$(cat /app/greeting.txt 2>/dev/null)" = "hello harbor" ]; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    require_podman()
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm (apt-get install nodejs)")
    if not (cache_root() / f"claude-code-{PRESETS['claude-code'].version}" / ".installed").exists():
        if subprocess.run(["npm", "ping"], capture_output=True, timeout=60, check=False).returncode != 0:
            pytest.skip("the npm registry is not reachable (the presets install from it)")
    with PodmanService.start(tmp_path_factory.mktemp("podman")) as running:
        yield running


def _task(root: Path) -> Path:
    """A Harbor task whose image is built from the project's offline base image (WORKDIR /app)."""
    folder = root / "greeting"
    (folder / "tests").mkdir(parents=True)
    (folder / "environment").mkdir()
    (folder / "instruction.md").write_text('Write "hello harbor" into greeting.txt.\n')
    (folder / "task.toml").write_text('[environment]\nworkdir = "/app"\n[verifier]\ntimeout_sec = 30\n')
    (folder / "environment" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\n")
    (folder / "tests" / "test.sh").write_text(TEST_SH)
    return folder


def _model() -> TokenPolicy:
    def reply(prompt: object, index: int) -> str:
        if index == 0:  # Claude Code's own Bash tool, run by the CLI inside the container
            call = {"name": "Bash", "arguments": {"command": "printf 'hello harbor' > greeting.txt && id -u"}}
            return f"<tool_call>{json.dumps(call)}</tool_call>"
        return "done"

    return TokenPolicy(ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END), RENDERER)


def test_claude_code_runs_inside_the_task_container(service: PodmanService, tmp_path: Path) -> None:
    policy = make_policy("claude-code", model=_model(), wall_limit=240)
    env = HarborTaskEnv(read_task(_task(tmp_path)), sandbox="docker", sandbox_options={"host": service.host})
    try:
        trajectory = asyncio.run(arollout(env, policy))
    finally:
        env.close()
    assert env.harness_layer is not None and env.harness_layer.mounts  # the episode ran in its container
    [step] = trajectory.steps  # the CLI's own tools: no env tool steps, its answer ends the episode
    harness = step.policy_info["harness"]
    assert harness["stop_reason"] == "done" and harness["returncode"] == 0, harness["stderr_tail"]
    assert step.reward == 1.0 and step.info["score"]["metadata"]["sandbox"]["provider"] == "docker"
    calls = harness["calls"]
    assert len(calls) == 2 and {call["api"] for call in calls} == {"messages"}
    for call in calls:
        assert call["prompt_token_ids"] and call["completion_token_ids"] and call["problems"] == []
        assert "Bash" in [tool["function"]["name"] for tool in call["tools"]]
    # the tool result the CLI sent back: the command ran in the container as its unprivileged user
    second = RENDERER.decode(calls[1]["prompt_token_ids"])
    assert "1000" in second
    assert not Path(env.harness_layer.socket_dir).exists()  # the endpoint's socket folder is removed


def test_container_true_needs_a_container_env(tmp_path: Path) -> None:
    policy = make_policy("command", command="true", container="true", model=_model())
    with pytest.raises(ConfigError, match="does not run in a container"):
        policy.for_env(HarborTaskEnv(read_task(_task(tmp_path))))  # on bubblewrap
    episode = make_policy("command", command="true", container="auto", model=_model()).for_env(
        HarborTaskEnv(read_task(_task(tmp_path / "b")))
    )
    assert episode.container is None  # auto: on the host (bubblewrap env), no container


def test_container_option_is_checked() -> None:
    with pytest.raises(ConfigError, match="container must be true, false or auto"):
        make_policy("command", command="true", container="sometimes", model=_model())
