"""One episode of a harness policy: the harness process it runs, and how that process ends.

:class:`_HarnessEpisode` is what ``CommandHarness.for_env`` returns: on its first turn it starts
the interception endpoint and the harness (``_start``: the command template filled in, the
sandbox, the MCP server of the env's tools through :class:`_EngineTools`), then hands each MCP
tool call to the engine as one env step and returns the harness's printed answer as the last.
A :class:`_Run` is one harness process; ``_watch``/``_wait`` kill it at the wall or call limit,
and ``_abandon`` cleans up an episode dropped with its harness still running (a sync rollout's
harness lives on the episode's own loop thread, ``_own_loop``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
from rolloutgym.llm.messages import content_text, observation_messages
from rolloutgym_protocol import PolicyOutput, spaces
from rolloutgym_protocol.errors import ConfigError

from ._command import never_ran, resolve_relative
from ._container import RUN_FOLDER, start_in_container, task_container
from .endpoint import InterceptionEndpoint
from .recording import EndpointSession

if TYPE_CHECKING:
    from .harness import CommandHarness  # harness.py makes the episodes: no runtime import back


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
        self.workdir = ""
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
        if session.stop_reason in ("max_calls", "token_limit"):
            reason = session.stop_reason
        elif loop.time() >= deadline:
            reason = "wall_limit"
        if reason:
            _kill(process)
            break
    out, err = await talk
    code = process.returncode
    if reason is None:
        reason = "done" if code == 0 else ("killed" if code is not None and code < 0 else "harness_error")
    if session.stop_reason in ("max_calls", "token_limit"):
        reason = session.stop_reason
    await run.events.put(("exit", out.decode(errors="replace"), err.decode(errors="replace"), code, reason))


class _HarnessEpisode:
    def __init__(self, harness: CommandHarness, environment: Any) -> None:
        self.harness = harness
        self.environment = environment
        # one session (the harness cannot open others to get past max_calls)
        self.endpoint = InterceptionEndpoint(
            harness.model,
            force=harness.force,
            max_calls=harness.max_calls,
            max_total_calls=harness.max_calls,
            max_completion_tokens=harness.max_completion_tokens,
            max_sessions=1,
        )
        space = getattr(environment, "action_space", None)
        self.text_action = environment is None or isinstance(space, (spaces.TextSpace, gym.spaces.Text))
        # inside the env's own container (the agent's tools are its own there): no MCP, no bubblewrap
        self.container = task_container(harness, environment)
        self.mcp = (
            self.container is None and environment is not None and _uses_mcp(harness, environment, self.text_action)
        )
        self.turn = 0
        self.first_call = 0
        self.run: _Run | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._finalizer = weakref.finalize(self, _abandon, None, self.endpoint, None, False)
        if self.container is not None:
            weakref.finalize(self, self.container.close)

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
        if self.container is not None:
            self.endpoint.unix_socket = self.container.socket_path
        elif self.harness.sandbox == "bwrap":
            self.endpoint.unix_socket = str(Path(scratch) / "endpoint.sock")
        await self.endpoint.start()
        if self.container is not None:
            os.chmod(self.container.socket_path, 0o666)  # the container's unprivileged user connects
            await self._start_in_container(run, instruction)
            return self._watch(run)
        mcp_url = ""
        if self.mcp:
            from rolloutgym.serve.mcp_bridge import session_mcp_server

            server = session_mcp_server(_EngineTools(self.environment, run.events), name="rolloutgym-env")
            mcp_url = await self.endpoint.add_mcp("episode", server)
        fields = {
            "instruction": shlex.quote(instruction),
            "instruction_file": shlex.quote(str(instruction_file)),
            "workdir": shlex.quote(workdir),
            "base_url": self.endpoint.base_url,
            "openai_base_url": self.endpoint.openai_base_url,
            "model": shlex.quote(self.harness.model_name),
            "mcp_url": mcp_url,
            "scratch": scratch,
        }
        fields["mcp_args"] = self.harness.mcp_args.format(**fields) if mcp_url else ""
        template = self.harness.command
        if self.harness.sandbox != "bwrap":  # the sandbox sees only the work folder: paths stay as written
            template = resolve_relative(template, self.harness.origin, workdir)
        run.workdir = workdir
        run.command = template.format(**fields)
        extra = {name: value.format(**fields) for name, value in self.harness.extra_env.items()}
        env = {**os.environ, **self.endpoint.environment(), **extra}
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
                packages=self.harness.sandbox_packages,
                files=self.harness.sandbox_files,
                folders=self.harness.sandbox_folders,
                python_path=self.harness.python_path,
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
        return self._watch(run)

    def _watch(self, run: _Run) -> _Run:
        run.watcher = asyncio.create_task(_watch(run, self.endpoint, self.harness.wall_limit))
        self._finalizer.detach()
        own = self._loop is not None
        self._finalizer = weakref.finalize(self, _abandon, run, self.endpoint, asyncio.get_running_loop(), own)
        return run

    async def _start_in_container(self, run: _Run, instruction: str) -> None:
        """The harness as an exec in the env's agent container (:mod:`rolloutgym_harness._container`)."""
        assert self.container is not None and self.endpoint.port is not None
        box = getattr(getattr(self.environment.unwrapped, "sandbox", None), "agent", None)
        if box is None:
            raise ConfigError("the env's agent container is not there: the harness starts after the env's reset")
        workdir = self.harness.workdir or box.workdir
        fields = {
            "instruction": shlex.quote(instruction),
            "instruction_file": f"{RUN_FOLDER}/instruction.md",
            "workdir": shlex.quote(workdir),
            "base_url": self.endpoint.base_url,
            "openai_base_url": self.endpoint.openai_base_url,
            "model": shlex.quote(self.harness.model_name),
            "mcp_url": "",
            "mcp_args": "",
            "scratch": RUN_FOLDER,
        }
        run.workdir = workdir
        run.command = (self.harness.container_command or self.harness.command).format(**fields)
        extra = {name: value.format(**fields) for name, value in self.harness.extra_env.items()}
        run.process = await start_in_container(
            self.container,
            box,
            command=run.command,
            instruction=instruction,
            port=self.endpoint.port,
            env={**self.endpoint.environment(), **extra},
            workdir=workdir,
            timeout=self.harness.wall_limit + 30,
        )

    def _record(self, run: _Run, session: EndpointSession, **facts: Any) -> dict[str, Any]:
        from .lineages import capture_summary

        graph = capture_summary(session.calls)  # over every call so far: the last step's is the episode's
        for position, call in enumerate(session.calls):
            call.lineage, call.parent = graph["lineage"][position], graph["parent"][position]
        calls = session.calls[self.first_call :]
        self.first_call = len(session.calls)
        harness = {"command": run.command, "segments": session.segments, "calls": [c.to_dict() for c in calls]}
        summary = {"lineages": graph["lineages"], "flagged_calls": graph["flagged_calls"], "flagged": graph["flagged"]}
        return {"turn": self.turn, "model": self.harness.name, "harness": {**harness, "graph": summary, **facts}}

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
        if self.container is not None:
            self.container.close()
        if reason in ("harness_error", "killed") and not session.calls and self.turn == 1:
            sandboxed = self.harness.sandbox == "bwrap"
            raise never_ran(run.command, code, stderr, run.workdir, sandboxed, self.container is not None)
        answer = stdout.strip()
        info = self._record(run, session, returncode=code, stop_reason=reason, stderr_tail=stderr[-2000:])
        action: Any = answer if self.text_action else {"role": "assistant", "content": answer}
        return PolicyOutput(action, info, stop_reason=reason)


def _kill(process: Any) -> None:
    if not isinstance(process, asyncio.subprocess.Process):  # a harness in the env's container
        process.kill()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
