"""The sandbox provider interface: selection, errors, limits and a provider added from outside."""

from __future__ import annotations

import pytest
from rolloutgym_code.sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    available_sandboxes,
    get_sandbox,
    register_sandbox,
)


def test_unknown_provider_names_the_choices():
    with pytest.raises(
        SandboxUnavailable, match=r"no sandbox provider 'bwarp'\. Did you mean 'bwrap'\?.*Available: auto, bwrap"
    ):
        get_sandbox("bwarp")


def test_environment_variable_selects_the_provider(monkeypatch):
    monkeypatch.setenv("ROLLOUTGYM_SANDBOX", "nope")
    with pytest.raises(SandboxUnavailable, match="no sandbox provider 'nope'"):
        get_sandbox()


def test_an_interpreter_in_roots_home_is_refused_with_the_reason(monkeypatch):
    import os

    from rolloutgym_code._bwrap_sandbox import BubblewrapSandbox

    if os.geteuid() != 0:
        pytest.skip("only root drops to another uid")
    sandbox = BubblewrapSandbox(python="/root/.pyenv/versions/3.11.7/bin/python3")
    problem = sandbox._diagnose()
    assert problem is not None and "cannot be run by the unprivileged sandbox uid" in problem


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="SandboxLimits.cpu_seconds must be positive"):
        SandboxLimits(cpu_seconds=0)


def test_result_status_and_description():
    assert SandboxResult(0, "").status == "ok"
    assert SandboxResult(1, "").describe() == "exited with status 1"
    assert SandboxResult(-24, "").describe() == "killed by SIGXCPU (CPU time limit)"
    assert SandboxResult(-9, "", timed_out=True, duration=2.0).status == "timeout"
    assert SandboxResult(-9, "", output_limit_exceeded=True).status == "output-limit"


class RecordingSandbox:
    """A provider added from outside: delegates to the default one and records each command."""

    name = "recording"

    def __init__(self) -> None:
        self.inner = get_sandbox(None)
        self.python = self.inner.python
        self.commands: list[list[str]] = []
        self.files: list[list[str]] = []

    def run(self, command, *, files, limits=None, collect=(), environment=None):
        self.commands.append(list(command))
        self.files.append(sorted(files))
        return self.inner.run(command, files=files, limits=limits, collect=collect, environment=environment)


@pytest.mark.sandbox
def test_a_registered_provider_grades_an_episode(sandbox, monkeypatch):
    from rolloutgym.registry import get_registry
    from rolloutgym_code import sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "_PROVIDERS", {})  # keep the registration local to this test
    recorder = RecordingSandbox()
    assert isinstance(recorder, Sandbox)
    register_sandbox("recording", lambda: recorder)
    assert "recording" in available_sandboxes()
    environment = get_registry().make("code/pyfunc-v0", task="roman-numerals", sandbox="recording")
    try:
        environment.reset()
        _, reward, terminated, _, info = environment.step({"role": "assistant", "content": "done"})
    finally:
        environment.close()
    assert terminated and reward == 0.0
    # one sandboxed run: the trusted supervisor, which starts pytest itself
    assert len(recorder.commands) == 1 and recorder.commands[0][-1] == ".rolloutgym-harness.json"
    # a provider without a read-only directory gets the hidden tests inside the workspace
    assert ".rolloutgym-trusted/tests/test_roman_hidden.py" in recorder.files[0]
