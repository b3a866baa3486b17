"""Harness policies: run an agent program you do not own against the interception endpoint.

``--policy harness:command --policy-arg command='my-agent --task {instruction_file}'
--policy-arg model=hf:tiny``: each env turn starts the endpoint, runs the command (a shell
command template) with ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``/... pointed at it, waits for
it (wall limit, call limit) and sends what it printed on stdout to the env as the answer.
Every model call the harness made is in the step's ``policy_info["harness"]["calls"]`` (token
ids, logprobs, stop reason, sampling parameters); :func:`harness_trajectory` turns a step back
into a token-exact :class:`~rolloutgym_protocol.Trajectory` (one step per model call).

On an env with tools that takes message actions (``mcp="auto"``), the harness also gets the
env's tools as an MCP server (streamable HTTP, ``ROLLOUTGYM_MCP_URL`` / ``{mcp_url}``, served by
:func:`rolloutgym.serve.mcp_bridge.session_mcp_server` on the endpoint's server): the harness
then lives across env steps; each MCP tool call it makes is one env step the engine records
(the env's answer goes back over MCP), and its printed answer is the last step.

Template fields: ``{instruction}`` (shell-quoted), ``{instruction_file}``, ``{workdir}``,
``{base_url}``, ``{openai_base_url}``, ``{model}``, ``{mcp_url}`` (empty without MCP).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
from rolloutgym.llm.messages import content_text, observation_messages
from rolloutgym_protocol import PolicyOutput, Step, Trajectory, spaces
from rolloutgym_protocol.errors import ConfigError

from .endpoint import InterceptionEndpoint
from .recording import CallRecord, EndpointSession

__all__ = ["CommandHarness", "harness_trajectory", "make_policy"]

_FIELDS = ("instruction", "instruction_file", "workdir", "base_url", "openai_base_url", "model", "mcp_url")


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
        mcp: serve the env's tools to the harness over MCP (``"auto"``: when the env has
            tools and takes message actions). The harness gets the server's URL as
            ``ROLLOUTGYM_MCP_URL`` and ``{mcp_url}``; each tool call it makes there is one
            env step of the episode, its printed answer the last.
        sandbox: ``"bwrap"`` runs the harness in bubblewrap (:mod:`rolloutgym_harness._sandbox`:
            no network but the endpoint at the same 127.0.0.1 address, the work folder the only
            writable host folder); ``"none"`` (default) runs it on the host, unsandboxed.
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
        mcp: bool | str = "auto",
        sandbox: str = "none",
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
        if isinstance(mcp, str) and mcp.lower() in ("true", "false", "auto"):
            mcp = {"true": True, "false": False, "auto": "auto"}[mcp.lower()]
        if mcp not in (True, False, "auto"):
            raise ConfigError(f"mcp must be true, false or auto (--policy-arg mcp=auto), got {mcp!r}")
        self.mcp = mcp
        if sandbox not in ("none", "bwrap"):
            raise ConfigError(f"sandbox must be none or bwrap (--policy-arg sandbox=bwrap), got {sandbox!r}")
        if sandbox == "bwrap":
            from ._sandbox import bwrap_path

            bwrap_path()
        self.sandbox = sandbox
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


class _EngineTools:
    """The env as :func:`rolloutgym.serve.mcp_bridge.session_mcp_server` sees it: its tools, and a
    ``step`` that hands the call to the engine (through the episode's queue) and waits for the
    env's answer. The engine steps the real env and records the step; rewards stay with the engine."""

    def __init__(self, environment: Any, events: asyncio.Queue[Any]) -> None:
        self.tools = list(getattr(environment, "tools", None) or [])
        self.rolloutgym_task_id = getattr(environment, "rolloutgym_task_id", None)
        self.events = events

    async def reset(self, seed: int | None = None) -> None:
        return None

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.events.put(("call", action, answer))
        return await answer


def _uses_mcp(harness: CommandHarness, environment: Any, text_action: bool) -> bool:
    has_tools = bool(getattr(environment, "tools", None))
    if harness.mcp == "auto":
        return has_tools and not text_action
    if harness.mcp and not has_tools:
        raise ConfigError(f"mcp=true: {type(environment).__name__} has no tools to serve over MCP; drop mcp=")
    return bool(harness.mcp)


class _Run:
    """One harness process: its watcher task, the queue of its MCP calls and its exit."""

    def __init__(self) -> None:
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        self.process: asyncio.subprocess.Process | None = None
        self.watcher: asyncio.Task[Any] | None = None
        self.pending: asyncio.Future[Any] | None = None
        self.command = ""
        self.scratch: str | None = None  # the run's own folder (instruction file; workdir by default)

    def release(self, endpoint: InterceptionEndpoint) -> None:
        """What needs no event loop: kill the harness, close the endpoint's socket, remove the folder."""
        if self.process is not None and self.process.returncode is None:
            _kill(self.process)
        endpoint.close_socket()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


async def _shutdown(endpoint: InterceptionEndpoint, run: _Run | None) -> None:
    if run is not None and run.watcher is not None:
        await asyncio.gather(run.watcher, return_exceptions=True)
    await endpoint.stop()
    if run is not None and run.scratch is not None:
        shutil.rmtree(run.scratch, ignore_errors=True)


def _abandon(
    run: _Run | None, endpoint: InterceptionEndpoint, loop: asyncio.AbstractEventLoop | None, own: bool
) -> None:
    """The episode is gone (it ended on an env step, not on the harness's answer, or it was dropped):
    kill a harness still running, stop the endpoint on its loop, and end the episode's own loop thread."""
    if run is not None and run.process is not None and run.process.returncode is None:
        _kill(run.process)
    if loop is None or loop.is_closed() or not loop.is_running():
        if run is not None:
            run.release(endpoint)
        return

    def schedule() -> None:
        task = loop.create_task(_shutdown(endpoint, run))
        if own:
            task.add_done_callback(lambda _: loop.stop())

    try:
        loop.call_soon_threadsafe(schedule)
    except RuntimeError:  # the loop closed meanwhile
        pass


def _own_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()

    def serve() -> None:
        loop.run_forever()
        loop.close()

    threading.Thread(target=serve, name="rolloutgym-harness", daemon=True).start()
    return loop


async def _watch(run: _Run, endpoint: InterceptionEndpoint, wall_limit: float) -> None:
    """Wait for the harness; kill it at the wall limit or the call limit; queue its exit. Cancelled
    (the loop is ending with the harness still running): release the run."""
    try:
        await _wait(run, endpoint.session(), wall_limit)
    except asyncio.CancelledError:
        run.release(endpoint)
        if run.process is not None:  # reap it and close its pipes while this loop still runs
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(run.process.wait(), 5)
            transport = getattr(run.process, "_transport", None)  # the reading tasks were cancelled too
            if transport is not None:
                with contextlib.suppress(Exception):
                    transport.close()
        raise


async def _wait(run: _Run, session: EndpointSession, wall_limit: float) -> None:
    process = run.process
    assert process is not None
    talk = asyncio.ensure_future(process.communicate())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wall_limit
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
    code = process.returncode
    if reason is None:
        reason = "done" if code == 0 else ("killed" if code is not None and code < 0 else "harness_error")
    if session.stop_reason == "max_calls":
        reason = "max_calls"
    await run.events.put(("exit", out.decode(errors="replace"), err.decode(errors="replace"), code, reason))


class _HarnessEpisode:
    def __init__(self, harness: CommandHarness, environment: Any) -> None:
        self.harness = harness
        self.environment = environment
        self.endpoint = InterceptionEndpoint(harness.model, force=harness.force, max_calls=harness.max_calls)
        space = getattr(environment, "action_space", None)
        self.text_action = environment is None or isinstance(space, (spaces.TextSpace, gym.spaces.Text))
        self.mcp = environment is not None and _uses_mcp(harness, environment, self.text_action)
        self.turn = 0
        self.first_call = 0
        self.run: _Run | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._finalizer = weakref.finalize(self, _abandon, None, self.endpoint, None, False)

    def __call__(self, observation: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a sync rollout: the harness lives on this episode's own loop thread
            if self._loop is None:
                self._loop = _own_loop()
            return asyncio.run_coroutine_threadsafe(self.act(observation), self._loop).result()
        return self.act(observation)

    async def _start(self, instruction: str) -> _Run:
        run = _Run()
        scratch = run.scratch = tempfile.mkdtemp(prefix="rolloutgym-harness-")
        workdir = self.harness.workdir or _workspace_dir(self.environment) or scratch
        instruction_file = Path(scratch) / "instruction.md"
        instruction_file.write_text(instruction)
        if self.harness.sandbox == "bwrap":
            self.endpoint.unix_socket = str(Path(scratch) / "endpoint.sock")
        await self.endpoint.start()
        mcp_url = ""
        if self.mcp:
            from rolloutgym.serve.mcp_bridge import session_mcp_server

            server = session_mcp_server(_EngineTools(self.environment, run.events), name="rolloutgym-env")
            mcp_url = await self.endpoint.add_mcp("episode", server)
        run.command = self.harness.command.format(
            instruction=shlex.quote(instruction),
            instruction_file=shlex.quote(str(instruction_file)),
            workdir=shlex.quote(workdir),
            base_url=self.endpoint.base_url,
            openai_base_url=self.endpoint.openai_base_url,
            model=shlex.quote(self.harness.model_name),
            mcp_url=mcp_url,
        )
        env = {**os.environ, **self.endpoint.environment(), **self.harness.extra_env}
        if mcp_url:
            env["ROLLOUTGYM_MCP_URL"] = mcp_url
        argv = ["/bin/sh", "-c", run.command]
        if self.harness.sandbox == "bwrap":
            from ._sandbox import sandboxed

            assert self.endpoint.unix_socket is not None and self.endpoint.port is not None
            argv = sandboxed(
                run.command,
                workdir=workdir,
                run_dir=scratch,
                socket_path=self.endpoint.unix_socket,
                port=self.endpoint.port,
            )
        run.process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=workdir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        run.watcher = asyncio.create_task(_watch(run, self.endpoint, self.harness.wall_limit))
        self._finalizer.detach()
        own = self._loop is not None
        self._finalizer = weakref.finalize(self, _abandon, run, self.endpoint, asyncio.get_running_loop(), own)
        return run

    def _record(self, run: _Run, session: EndpointSession, **facts: Any) -> dict[str, Any]:
        calls = session.calls[self.first_call :]
        self.first_call = len(session.calls)
        harness = {"command": run.command, "segments": session.segments, "calls": [c.to_dict() for c in calls]}
        return {"turn": self.turn, "model": self.harness.name, "harness": {**harness, **facts}}

    async def act(self, observation: Any) -> PolicyOutput:
        self.turn += 1
        session = self.endpoint.session()
        run = self.run
        if run is None:
            messages = observation_messages(observation)
            instruction = content_text(messages[-1].get("content")) if messages else ""
            run = self.run = await self._start(instruction)
        elif run.pending is not None:  # the env answered the harness's MCP call: hand it back
            run.pending.set_result((observation, 0.0, False, False, {}))
            run.pending = None
        event = await run.events.get()
        if event[0] == "call":
            _, action, run.pending = event
            name = action["tool_calls"][0]["name"]
            return PolicyOutput(action, self._record(run, session, mcp_call=name, stop_reason=None))
        _, stdout, stderr, code, reason = event
        self.run = None
        await self.endpoint.stop()
        if run.scratch is not None:
            shutil.rmtree(run.scratch, ignore_errors=True)
        answer = stdout.strip()
        info = self._record(run, session, returncode=code, stop_reason=reason, stderr_tail=stderr[-2000:])
        action: Any = answer if self.text_action else {"role": "assistant", "content": answer}
        return PolicyOutput(action, info, stop_reason=reason)


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def harness_trajectory(item: Step | Trajectory, *, reward: float | None = None) -> Trajectory:
    """The model calls recorded in a harness step (or in all the harness steps of an episode, as
    with MCP, where each tool call is a step), as a token-exact trajectory (one step per call;
    works on steps read back from a run file). ``reward`` defaults to the step's (the episode's return)."""
    steps = list(item.steps) if isinstance(item, Trajectory) else [item]
    records = [step.policy_info.get("harness") for step in steps]
    records = [record for record in records if isinstance(record, Mapping)]
    if not records:
        raise ConfigError("this step has no policy_info['harness']: it was not made by a harness policy")
    session = EndpointSession("replay")
    session.calls = [CallRecord(**call) for record in records for call in record.get("calls", [])]
    session.segments = int(records[-1].get("segments", 0))
    session.stop_reason = str(records[-1].get("stop_reason"))
    if reward is None:
        reward = sum(step.reward for step in steps)
    return session.trajectory(reward=reward)


_ALLOWED = {
    "command",
    "model",
    "model_args",
    "base_url",
    "wall_limit",
    "max_calls",
    "force",
    "workdir",
    "env",
    "name",
    "mcp",
    "sandbox",
}
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
