"""Without the rolloutgym-platform distribution (here: its plugin switched off), ``rolloutgym platform ...`` says in
one line what to install, instead of typer's "No such command"; the client commands stay the core's."""

from __future__ import annotations

import os
import subprocess
import sys


def test_platform_serve_without_the_distribution_names_the_install(tmp_path) -> None:
    env = dict(os.environ, ROLLOUTGYM_DISABLE_PLUGINS="platform", NO_COLOR="1", COLUMNS="200")
    command = [sys.executable, "-m", "rolloutgym", "platform", "serve", "--data", str(tmp_path / "data")]
    answer = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    lines = answer.stderr.strip().splitlines()
    assert answer.returncode == 2, answer.stderr
    assert len(lines) == 1 and "Traceback" not in answer.stderr, answer.stderr
    assert lines[0].startswith("error: 'rolloutgym platform' comes with the rolloutgym-platform distribution")
    assert "pip install" in lines[0] and "rolloutgym-platform" in lines[0].rsplit("pip install", 1)[1]
    assert not (tmp_path / "data").exists()


def test_the_client_commands_are_the_cores() -> None:
    from rolloutgym.cli import app

    names = {command.name for command in app.registered_commands}
    assert {"login", "push", "improve", "jobs", "job", "run-remote"} <= names
