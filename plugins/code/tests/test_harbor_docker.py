"""Harbor tasks in their own image (issue 41): ``rolloutgym run TASKS --sandbox docker`` on podman.

The task is ``examples/harbor-docker/greeter``: its ``environment/Dockerfile`` installs the
``greeter`` module the task is about (so the host's Python could not solve it), its base image
mapped to the project's offline base image. The oracle scores 1, doing nothing 0, and agents that
tamper (write the reward file, plant processes and links, look for the tests, the solution and
task.toml) score 0: the agent's container never holds them, and the verifier runs in a separate
container after the agent's is gone. Skipped locally, failed under CI=true, without podman.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.sandboxes import SandboxInfraError
from rolloutgym_code._harbor_task import read_task
from rolloutgym_code.harbor import HarborTaskEnv
from rolloutgym_testing.podman import BASE_IMAGE, PodmanService, require_podman

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "harbor-docker" / "greeter"
IMAGE_MAP = f"python:3.11-slim={BASE_IMAGE}"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    require_podman()
    with PodmanService.start(tmp_path_factory.mktemp("podman")) as running:
        yield running


@pytest.fixture
def task_dir(tmp_path):
    folder = tmp_path / "tasks" / "greeter"
    shutil.copytree(EXAMPLE, folder)
    return folder


def _env(service: PodmanService, folder: Path, **options: Any) -> HarborTaskEnv:
    return HarborTaskEnv(
        read_task(folder), sandbox="docker", image_map=IMAGE_MAP, sandbox_options={"host": service.host}, **options
    )


def _bash(command: str) -> dict[str, Any]:
    call = {"id": "call_0", "name": "bash", "arguments": {"command": command}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _play(env: HarborTaskEnv, commands: list[str]) -> tuple[float, list[str], dict[str, Any]]:
    env.reset()
    seen = []
    try:
        for command in commands:
            observation, _, terminated, _, _ = env.step(_bash(command))
            seen.append(observation[0]["content"])
            assert not terminated
        _, reward, terminated, _, info = env.step({"role": "assistant", "content": "done"})
        assert terminated
    finally:
        env.close()
    return reward, seen, info


def test_the_oracle_and_null_through_the_command_line(service, task_dir, tmp_path):
    environment = {**os.environ, "DOCKER_HOST": service.host}
    rewards = {}
    for policy in ("oracle", "null"):
        out = tmp_path / f"{policy}.jsonl"
        command = [sys.executable, "-m", "rolloutgym", "run", str(task_dir.parent), "--sandbox", "docker"]
        command += ["--image-map", IMAGE_MAP, "--policy", policy, "-o", str(out), "-q"]
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        records = [json.loads(line) for line in out.read_text().splitlines()]
        rewards[policy] = [score["value"] for record in records for score in record.get("scores", [])]
    assert rewards == {"oracle": [1.0], "null": [0.0]}


def test_the_image_is_the_tasks_own_and_holds_no_tests_solution_or_task_toml(service, task_dir):
    commands = [
        "python3 -m greeter Bob; id -u; cat /app/notes.txt",
        "ls /tests /solution /logs/verifier 2>&1; find / -xdev \\( -name solve.sh -o -name test.sh "
        "-o -name task.toml -o -name instruction.md \\) 2>/dev/null; echo searched",
    ]
    reward, seen, info = _play(_env(service, task_dir), commands)
    assert reward == 0.0
    assert seen[0].startswith("Hello, Bob! (greeter 1.0)\n1000\nNotes for the agent")
    assert seen[1].count("No such file or directory") == 3
    assert seen[1].split("No such file or directory")[-1].strip().startswith("searched")
    stages = info["score"]["metadata"]["sandbox"]["stages"]
    assert {"build", "create", "start", "first_exec", "destroy"} <= set(stages["agent"])
    assert "verifier" in stages


TAMPERING = [
    # the reward file, from the agent's shell: the root is read-only and the verifier's /logs is fresh
    "mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; echo rc=$?",
    # the tests: there are none to edit, and making /tests fails the same way
    "mkdir -p /tests && printf 'echo 1 > /logs/verifier/reward.txt' > /tests/test.sh; echo rc=$?",
    # a process left behind to write the reward while the tests run (the container is gone by then)
    "(for i in $(seq 600); do mkdir -p /logs/verifier 2>/dev/null; echo 1 > /logs/verifier/reward.txt 2>/dev/null; "
    "sleep 0.1; done) > /dev/null 2>&1 & echo planted",
    # links in the working folder to where the reward and tests will be, and a wrong answer
    "ln -s /logs/verifier/reward.txt reward.txt; ln -s /tests tests; echo 'Hello, Ada!' > answer.txt; echo linked",
]


def test_agents_that_tamper_with_the_reward_or_the_tests_score_zero(service, task_dir):
    reward, seen, info = _play(_env(service, task_dir), TAMPERING)
    assert reward == 0.0
    assert "Read-only file system" in seen[0] and "rc=1" in seen[0]
    assert "Read-only file system" in seen[1]
    assert info["score"]["feedback"] == "the task's tests gave reward 0.0"


def test_the_same_shell_solves_it_with_the_right_answer(service, task_dir):
    """The tampering test is real: the answer written through the same tool scores 1."""
    reward, _, _ = _play(_env(service, task_dir), ["python3 -m greeter Ada > answer.txt"])
    assert reward == 1.0


def test_a_dockerfile_that_fails_to_build_is_an_infrastructure_error(service, task_dir):
    dockerfile = task_dir / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo the build breaks here && false\n")
    env = _env(service, task_dir)
    with pytest.raises(SandboxInfraError, match=r"the image did not build.*the build breaks here"):
        env.reset()
    env.close()


def test_a_base_image_missing_offline_names_the_image_map_option(service, task_dir):
    env = HarborTaskEnv(read_task(task_dir), sandbox="docker", sandbox_options={"host": service.host})
    with pytest.raises(SandboxInfraError, match=r"--image-map python:3.11-slim="):
        env.reset()
    env.close()


def _containers(label: str) -> list[str]:
    listed = subprocess.run(
        ["podman", "ps", "-a", "-q", "--filter", f"label={label}"], capture_output=True, text=True, timeout=120
    )
    return listed.stdout.split()


def test_ctrl_c_mid_episode_leaves_no_container_behind(service, task_dir, tmp_path):
    (task_dir / "solution" / "solve.sh").write_text("#!/bin/bash\nsleep 20\n")
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + '\n[task]\nname = "ctrl-c-probe"\n')
    label = "io.rolloutgym.harbor.task=ctrl-c-probe"
    command = [sys.executable, "-m", "rolloutgym", "run", str(task_dir.parent), "--sandbox", "docker"]
    command += ["--image-map", IMAGE_MAP, "--policy", "oracle", "-o", str(tmp_path / "run.jsonl"), "-q"]
    environment = {**os.environ, "DOCKER_HOST": service.host}
    with subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as run:
        while not _containers(label):  # the agent's container is up: the episode is in flight
            assert run.poll() is None, run.stdout.read().decode() if run.stdout else ""
        run.send_signal(signal.SIGINT)
        output = run.communicate(timeout=300)[0].decode()
    assert run.returncode == 130, output
    assert _containers(label) == []


def test_a_sandbox_that_dies_mid_episode_is_an_infrastructure_error(service, task_dir):
    env = _env(service, task_dir)
    env.reset()
    try:
        agent = env.sandbox.agent
        subprocess.run(["podman", "rm", "-f", agent.id], capture_output=True, timeout=120, check=True)
        with pytest.raises(SandboxInfraError, match=r"the sandbox \w+ is gone or stopped"):
            env.step(_bash("echo hello"))
    finally:
        env.close()
