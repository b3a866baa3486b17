"""Harness policies: run an agent program you do not own against the interception endpoint.

``--policy harness:command --policy-arg command='my-agent --task {instruction_file}'
--policy-arg model=hf:tiny``: each env turn starts the endpoint, runs the command (a shell
command template) with ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``/... pointed at it, waits for
it (wall limit, call limit) and sends what it printed on stdout to the env as the answer.
Every model call the harness made is in the step's ``policy_info["harness"]["calls"]`` (token
ids, logprobs, stop reason, sampling parameters); :func:`harness_trajectory` turns a step back
into a token-exact :class:`~rolloutgym_protocol.Trajectory` (one step per model call).

Template fields: ``{instruction}`` (shell-quoted), ``{instruction_file}``, ``{workdir}``,
``{base_url}``, ``{openai_base_url}``, ``{model}``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
from rolloutgym.llm.messages import content_text, observation_messages
from rolloutgym_protocol import PolicyOutput, Step, Trajectory, spaces
from rolloutgym_protocol.errors import ConfigError

from .endpoint import CallRecord, InterceptionEndpoint, Session

__all__ = ["CommandHarness", "harness_trajectory", "make_policy"]

_FIELDS = ("instruction", "instruction_file", "workdir", "base_url", "openai_base_url", "model")


def _call_maybe_sync(coroutine: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    return coroutine


class CommandHarness:
    """A policy that runs a CLI agent per env turn, its model calls served by the endpoint.

    Args:
        command: a shell command template (see the module docstring for its fields).
        model: the policy that answers the harness's model calls (``"hf:tiny"``, an
            ``openai:MODEL`` reference, forwarded to that server, or a policy object).
        model_args: options for the model's factory when ``model`` is a reference
            (``{"threads": 1}``, ``{"api_key": "...", "return_token_ids": True}``).
        base_url: the ``openai:`` server (``--base-url``); same as ``model_args={"base_url": ...}``.
        wall_limit: seconds the harness may run per turn; then it is killed and the
            episode's stop reason is ``"wall_limit"``.
        max_calls: the most model calls per episode (``"max_calls"``).
        force: sampling parameters the trainer forces on every call.
        workdir: where the harness runs (default: the env's ``workspace`` folder when it
            has one on disk, else a fresh temporary folder per episode).
        env: extra environment variables for the harness.
    """

    def __init__(
        self,
        command: str,
        *,
        model: Any = "hf:tiny",
        model_args: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        wall_limit: float = 600.0,
        max_calls: int | None = None,
        force: Mapping[str, Any] | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not command or not isinstance(command, str):
            raise ConfigError("harness:command needs a command template: --policy-arg command='agent {instruction}'")
        try:
            command.format(**{key: "" for key in _FIELDS})
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"harness command template {command!r}: bad field {exc}; fields: {', '.join(_FIELDS)} "
                "(write {{ and }} for literal braces)"
            ) from exc
        if float(wall_limit) <= 0:
            raise ConfigError(f"wall_limit must be positive, got {wall_limit}")
        if model_args is not None and not isinstance(model_args, Mapping):
            raise ConfigError(
                f"model_args must be a mapping (--policy-arg 'model_args={{\"threads\": 1}}'), got {model_args!r}"
            )
        options = dict(model_args or {})
        if base_url is not None:
            options["base_url"] = base_url
        if isinstance(model, str):
            from rolloutgym import make_policy

            self.model_name = model
            model = make_policy(model, **options)
        elif options:
            raise ConfigError("model_args and base_url apply to a model reference (model='openai:NAME'), not an object")
        else:
            self.model_name = getattr(model, "name", None) or type(model).__name__
        self.model = model
        self.command = command
        self.wall_limit = float(wall_limit)
        self.max_calls = None if max_calls is None else int(max_calls)
        self.force = dict(force or {})
        self.workdir = workdir
        self.extra_env = dict(env or {})
        self.name = name or f"harness:command({self.model_name})"

    def for_env(self, environment: Any) -> _HarnessEpisode:
        return _HarnessEpisode(self, environment)

    def __call__(self, observation: Any) -> Any:
        return self.for_env(None)(observation)


def _workspace_dir(environment: Any) -> str | None:
    workspace = getattr(environment, "workspace", None)
    for attribute in ("root", "path", "directory"):
        value = getattr(workspace, attribute, None)
        if isinstance(value, (str, os.PathLike)) and Path(value).is_dir():
            return str(value)
    return None


class _HarnessEpisode:
    def __init__(self, harness: CommandHarness, environment: Any) -> None:
        self.harness = harness
        self.environment = environment
        self.endpoint = InterceptionEndpoint(harness.model, force=harness.force, max_calls=harness.max_calls)
        space = getattr(environment, "action_space", None)
        self.text_action = environment is None or isinstance(space, (spaces.TextSpace, gym.spaces.Text))
        self.turn = 0

    def __call__(self, observation: Any) -> Any:
        return _call_maybe_sync(self.act(observation))

    async def _run(self, command: str, workdir: str, session: Session) -> tuple[str, str, int | None, str]:
        env = {**os.environ, **self.endpoint.environment(), **self.harness.extra_env}
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=workdir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        talk = asyncio.ensure_future(process.communicate())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.harness.wall_limit
        reason = None
        while not talk.done():
            await asyncio.wait([talk], timeout=0.05)
            if talk.done():
                break
            if session.stop_reason == "max_calls":
                reason = "max_calls"
            elif loop.time() >= deadline:
                reason = "wall_limit"
            if reason:
                _kill(process)
                break
        out, err = await talk
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
        code = process.returncode
        if reason is None:
            reason = "done" if code == 0 else ("killed" if code is not None and code < 0 else "harness_error")
        if session.stop_reason == "max_calls":
            reason = "max_calls"
        return stdout, stderr, code, reason

    async def act(self, observation: Any) -> PolicyOutput:
        messages = observation_messages(observation)
        instruction = content_text(messages[-1].get("content")) if messages else ""
        self.turn += 1
        with tempfile.TemporaryDirectory(prefix="rolloutgym-harness-") as scratch:
            workdir = self.harness.workdir or _workspace_dir(self.environment) or scratch
            instruction_file = Path(scratch) / "instruction.md"
            instruction_file.write_text(instruction)
            async with self.endpoint:
                command = self.harness.command.format(
                    instruction=shlex.quote(instruction),
                    instruction_file=shlex.quote(str(instruction_file)),
                    workdir=shlex.quote(workdir),
                    base_url=self.endpoint.base_url,
                    openai_base_url=self.endpoint.openai_base_url,
                    model=shlex.quote(self.harness.model_name),
                )
                session = self.endpoint.session()
                first = len(session.calls)
                stdout, stderr, code, reason = await self._run(command, workdir, session)
        calls = session.calls[first:]
        answer = stdout.strip()
        info = {
            "turn": self.turn,
            "model": self.harness.name,
            "harness": {
                "command": command,
                "returncode": code,
                "stop_reason": reason,
                "stderr_tail": stderr[-2000:],
                "segments": session.segments,
                "calls": [call.to_dict() for call in calls],
            },
        }
        action: Any = answer if self.text_action else {"role": "assistant", "content": answer}
        return PolicyOutput(action, info, stop_reason=reason)


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def harness_trajectory(step: Step, *, reward: float | None = None) -> Trajectory:
    """The model calls recorded in a harness step, as a token-exact trajectory (one step per call;
    works on steps read back from a run file)."""
    record = step.policy_info.get("harness")
    if not isinstance(record, Mapping):
        raise ConfigError("this step has no policy_info['harness']: it was not made by a harness policy")
    session = Session("replay")
    session.calls = [CallRecord(**call) for call in record.get("calls", [])]
    session.segments = int(record.get("segments", 0))
    session.stop_reason = str(record.get("stop_reason"))
    return session.trajectory(reward=step.reward if reward is None else reward)


_ALLOWED = {"command", "model", "model_args", "base_url", "wall_limit", "max_calls", "force", "workdir", "env", "name"}
_MINI_ALLOWED = (_ALLOWED - {"command"}) | {"step_limit"}


def make_policy(kind: str | None = None, **options: Any) -> CommandHarness:
    """The ``harness`` provider: ``harness:command`` (``command=`` a template, ``model=`` a policy)
    and ``harness:mini-swe-agent`` (``step_limit=``, ``model=``; needs ``pip install mini-swe-agent``)."""
    if kind == "mini-swe-agent":
        unknown = sorted(set(options) - _MINI_ALLOWED)
        if unknown:
            known = ", ".join(sorted(_MINI_ALLOWED))
            raise ConfigError(f"harness:mini-swe-agent: unknown option(s) {', '.join(unknown)}; known: {known}")
        step_limit = int(options.pop("step_limit", 20))
        runner = f"{shlex.quote(sys.executable)} -m rolloutgym_harness.mini_swe"
        command = f"{runner} {{instruction_file}} --step-limit {step_limit}"
        return CommandHarness(command, **{"name": "harness:mini-swe-agent", **options})
    if kind != "command":
        raise ConfigError(f"unknown harness {kind!r}; known: harness:command, harness:mini-swe-agent")
    unknown = sorted(set(options) - _ALLOWED)
    if unknown:
        raise ConfigError(
            f"harness policy: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_ALLOWED))}"
        )
    if "command" not in options:
        raise ConfigError("harness:command needs --policy-arg command='agent {instruction}'")
    return CommandHarness(**options)
