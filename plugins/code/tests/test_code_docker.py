"""The code envs on the docker sandbox provider (``--sandbox docker``), over podman (issue 41).

The oracle's fix scores 1 and the untouched repository 0 with the hidden tests run in a container;
the agent's ``run_tests`` runs there too; code that tries to rewrite the trusted tests or leave
the workspace meets a read-only root and root-owned trusted files. Skipped locally, failed under
CI=true, without podman or the base image.
"""

from __future__ import annotations

from typing import Any

import pytest
import rolloutgym
from rolloutgym_code.sandbox import get_sandbox
from rolloutgym_testing.podman import PodmanService, require_podman


@pytest.fixture(scope="module")
def docker_host(tmp_path_factory):
    require_podman()
    with PodmanService.start(tmp_path_factory.mktemp("podman")) as running:
        mp = pytest.MonkeyPatch()
        mp.setenv("DOCKER_HOST", running.host)
        yield running.host
        mp.undo()


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": name, "arguments": arguments}]}


def _play(env: Any, actions: list[dict[str, Any]]) -> tuple[float, list[Any]]:
    env.reset()
    seen = []
    reward = 0.0
    for action in actions:
        observation, reward, terminated, _, info = env.step(action)
        seen.append(observation)
        if terminated:
            return reward, seen
    raise AssertionError("the episode did not end")


def test_the_oracle_scores_one_and_the_untouched_repository_zero(docker_host):
    env = rolloutgym.make("code/pybugs-v0", task=0, sandbox="docker")
    try:
        assert env.unwrapped.sandbox.name == "docker"
        env.reset()
        reward = 0.0
        for _ in range(20):
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            if terminated:
                break
        assert reward == 1.0, info["score"]["feedback"]
        reward, _ = _play(env, [_call("submit")])
        assert reward == 0.0
    finally:
        env.close()


def test_code_under_test_cannot_touch_the_trusted_files_or_the_root(docker_host):
    sandbox = get_sandbox("docker")
    probe = (
        "import os, pathlib\n"
        "for target in ('/tmp/rolloutgym-trusted/tests.py', '/usr/lib/python3/dist-packages/x.py', '/etc/x'):\n"
        "    try:\n"
        "        pathlib.Path(target).write_text('forged')\n"
        "        print('wrote', target)\n"
        "    except OSError as exc:\n"
        "        print('refused', target, exc.strerror)\n"
        "print('uid', os.getuid())\n"
    )
    result = sandbox.run(
        ["python3", "-c", probe], files={"a.py": b"x = 1\n"}, trusted_files={"tests.py": b"def test(): pass\n"}
    )
    assert "wrote" not in result.output, result.output
    assert result.output.count("refused") == 3 and "uid 1000" in result.output
