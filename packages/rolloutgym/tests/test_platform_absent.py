"""Without the rolloutgym-platform distribution (here: its plugin switched off), ``rolloutgym platform ...`` says in
one line what to install, instead of typer's "No such command"; the client commands stay the core's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("plugin", "arguments", "distribution"),
    [
        ("platform", ["platform", "serve", "--data", "data"], "rolloutgym-platform"),
        ("code", ["tasks", "make-repo", "parse", "--out", "data"], "rolloutgym-code"),
        ("trl", ["train", "sft", "run.jsonl", "--out", "data"], "rolloutgym-trl"),
    ],
)
def test_a_plugin_command_without_its_distribution_names_the_install(
    tmp_path, plugin: str, arguments: list[str], distribution: str
) -> None:
    env = dict(os.environ, ROLLOUTGYM_DISABLE_PLUGINS=plugin, NO_COLOR="1", COLUMNS="200")
    command = [sys.executable, "-m", "rolloutgym", *arguments]
    answer = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    lines = answer.stderr.strip().splitlines()
    assert answer.returncode == 2, answer.stderr
    assert len(lines) == 1 and "Traceback" not in answer.stderr, answer.stderr
    assert lines[0].startswith(f"error: 'rolloutgym {arguments[0]}' comes with the {distribution} distribution")
    # the checkout's folder of that distribution (or its name, off a checkout)
    where = lines[0].rsplit("pip install", 1)[1].strip()
    folder = {"rolloutgym-platform": "packages/rolloutgym-platform"}.get(distribution, f"plugins/{plugin}")
    assert where.endswith(folder) or distribution in where, lines[0]
    assert not (tmp_path / "data").exists()


def test_the_client_commands_are_the_cores() -> None:
    from rolloutgym.cli import app

    names = {command.name for command in app.registered_commands}
    assert {"login", "push", "improve", "jobs", "job", "run-remote"} <= names
