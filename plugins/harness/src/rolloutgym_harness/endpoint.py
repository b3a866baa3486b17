"""The interception endpoint: a local model server that records exact tokens.

:class:`InterceptionEndpoint` listens on 127.0.0.1 (a free port) and speaks OpenAI Chat
Completions (streaming and not), the OpenAI Responses API and Anthropic Messages. It answers
with a token-level policy (``hf:``, ``vllm:``, ``tinker:``: any :class:`~rolloutgym.llm.TokenPolicy`)
through the policy's renderer, or forwards to a message-level one (``openai:``). Every call is
recorded (:class:`~rolloutgym_harness.recording.CallRecord`, :mod:`rolloutgym_harness.recording`)
and the calls of a session become a ``Trajectory`` with exact tokens and loss masks
(:meth:`~rolloutgym_harness.recording.EndpointSession.trajectory`).

A session is one conversation: ``/v1/...`` is session ``"default"``, ``/s/NAME/v1/...`` is
session ``NAME`` (one endpoint can serve a whole group).

How a call is answered (sampling parameters, prompt, token- or message-level reply) is
``_model_calls.py``; this module records it and serves the endpoint (HTTP, MCP, threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from . import wire
from ._model_calls import _SAMPLING_KEYS, ModelCalls
from .recording import CallRecord, EndpointSession

__all__ = ["InterceptionEndpoint"]


class InterceptionEndpoint(ModelCalls):
    """A local model endpoint over ``policy`` that records every call.

    Args:
        policy: a :class:`~rolloutgym.llm.TokenPolicy` (has ``sampler`` and ``renderer``),
            a :class:`~rolloutgym.llm.ChatPolicy` (forwarded through ``complete``), or a
            reference string for :func:`rolloutgym.make_policy` (``"hf:tiny"``).
        force: sampling parameters that override what the harness asks for
            (``{"temperature": 1.0, "max_tokens": 256}``): the trainer's sampling.
        max_calls: the most model calls per session; the next call is refused and the
            session's stop reason becomes ``"max_calls"``.
        host: the interface to listen on (127.0.0.1).

    Use ``async with InterceptionEndpoint(...) as endpoint`` inside an event loop, or
    ``with`` (the server then runs on its own thread). ``endpoint.base_url`` is
    ``http://127.0.0.1:PORT``; OpenAI clients take ``endpoint.openai_base_url``.
    """

    def __init__(
        self,
        policy: Any,
        *,
        force: Mapping[str, Any] | None = None,
        max_calls: int | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        if isinstance(policy, str):
            from rolloutgym import make_policy

            policy = make_policy(policy)
        self.policy = policy
        self.token_level = hasattr(policy, "sampler") and hasattr(policy, "renderer")
        if not self.token_level and not hasattr(policy, "complete"):
            raise ConfigError(
                f"{type(policy).__name__} is neither token-level (sampler + renderer) nor message-level "
                "(complete()); use an hf:, vllm:, tinker: or openai: policy"
            )
        unknown = sorted(set(force or {}) - set(_SAMPLING_KEYS))
        if unknown:
            raise ConfigError(
                f"force: unknown sampling parameter(s) {', '.join(unknown)}; known: {', '.join(_SAMPLING_KEYS)}"
            )
        self.force = dict(force or {})
        self.max_calls = max_calls
        self.host = host
        self.sessions: dict[str, EndpointSession] = {}
        self.port: int | None = None
        self._server: Any = None
        self._task: asyncio.Task[Any] | None = None
        self._thread: threading.Thread | None = None
        self._calls = 0
        self.mcp_apps: dict[str, Any] = {}  # path name -> the MCP session manager serving it
        self._socket: socket.socket | None = None
        self._unix: socket.socket | None = None
        self.unix_socket: str | None = None  # also serve on this socket file (set before start)
        self._mcp_tasks: dict[str, tuple[asyncio.Task[Any], asyncio.Event]] = {}

    # ---- addresses -------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the endpoint is not started")
        return f"http://{self.host}:{self.port}"

    def session_url(self, session: str | None = None) -> str:
        """The base URL of one session (Anthropic clients take it as is)."""
        return self.base_url if session in (None, "default") else f"{self.base_url}/s/{session}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def session(self, name: str = "default") -> EndpointSession:
        if name not in self.sessions:
            self.sessions[name] = EndpointSession(name)
        return self.sessions[name]

    def environment(self, session: str | None = None) -> dict[str, str]:
        """Environment variables that point common harnesses (and their SDKs) at this endpoint."""
        base = self.session_url(session)
        return {
            "OPENAI_BASE_URL": f"{base}/v1",
            "OPENAI_API_BASE": f"{base}/v1",
            "OPENAI_API_KEY": "rolloutgym-local",
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": "rolloutgym-local",
            "ANTHROPIC_AUTH_TOKEN": "rolloutgym-local",
            "ROLLOUTGYM_ENDPOINT": base,
        }

    async def call(self, request: wire.Request, session_name: str = "default") -> wire.Reply:
        """Answer one model call and record it (the HTTP routes call this)."""
        session = self.session(session_name)
        async with session.lock:
            if self.max_calls is not None and len(session.calls) >= self.max_calls:
                session.stop_reason = "max_calls"
                raise wire.Refused(
                    429, f"session {session_name!r} reached max_calls={self.max_calls}; the episode is over"
                )
            params = self._params(request.requested)
            started = time.perf_counter()
            handler = self._token_call if self.token_level else self._message_call
            reply, facts = await handler(session, request, params)
            if facts["new_segment"]:
                session.segments += 1
            elif not session.calls:
                session.segments = 1
            session.calls.append(
                CallRecord(
                    index=len(session.calls),
                    api=request.api,
                    session=session_name,
                    messages=request.messages,
                    tools=request.tools,
                    requested=request.requested,
                    params={
                        "max_tokens": params.max_tokens,
                        "temperature": params.temperature,
                        "top_p": params.top_p,
                        "stop": list(params.stop),
                        "seed": params.seed,
                    },
                    prompt_token_ids=None if reply.prompt_token_ids is None else list(reply.prompt_token_ids),
                    completion_token_ids=None if reply.token_ids is None else list(reply.token_ids),
                    logprobs=None if reply.logprobs is None else list(reply.logprobs),
                    stop_reason=reply.stop_reason,
                    text=facts["text"],
                    tool_calls=reply.tool_calls,
                    segment=max(session.segments - 1, 0),
                    new_segment=facts["new_segment"],
                    extends=facts["extends"],
                    seconds=time.perf_counter() - started,
                    upstream=facts.get("upstream", {}),
                )
            )
            return reply

    # ---- MCP -------------------------------------------------------------------------
    def mcp_url(self, name: str) -> str:
        return f"{self.base_url}/mcp/{name}/"

    async def add_mcp(self, name: str, server: Any) -> str:
        """Serve the MCP ``server`` (a low-level ``mcp`` Server) over streamable HTTP at
        ``/mcp/NAME/`` until :meth:`remove_mcp` or :meth:`stop`; returns its URL."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
        )
        manager = StreamableHTTPSessionManager(server, stateless=True, json_response=True, security_settings=security)
        started, stop = asyncio.Event(), asyncio.Event()

        async def serve() -> None:
            async with manager.run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(serve())
        waiter = asyncio.ensure_future(started.wait())
        await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            waiter.cancel()
            task.result()
        self.mcp_apps[name] = manager
        self._mcp_tasks[name] = (task, stop)
        return self.mcp_url(name)

    async def remove_mcp(self, name: str) -> None:
        self.mcp_apps.pop(name, None)
        entry = self._mcp_tasks.pop(name, None)
        if entry is not None:
            task, stop = entry
            stop.set()
            await asyncio.gather(task, return_exceptions=True)

    # ---- serving ---------------------------------------------------------------------
    def app(self) -> Any:
        from ._app import build_app

        return build_app(self)

    async def start(self) -> InterceptionEndpoint:
        """Start serving on the running event loop."""
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        self._socket = sock
        sockets = [sock]
        if self.unix_socket is not None:  # the same server on a socket file (a sandboxed harness's way in)
            if os.path.exists(self.unix_socket):
                os.unlink(self.unix_socket)
            unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            unix.bind(self.unix_socket)
            self._unix = unix
            sockets.append(unix)
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._task = asyncio.create_task(self._server.serve(sockets=sockets))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.005)
        return self

    def close_socket(self) -> None:
        """Close the listening sockets and open connections now (the loop that served them is
        going: its tasks are being cancelled, so the server will not shut down by itself)."""
        server = self._server
        for connection in list(getattr(getattr(server, "server_state", None), "connections", ())):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                with contextlib.suppress(RuntimeError):  # its loop is already closed
                    transport.close()
        for name in ("_socket", "_unix"):
            sock = getattr(self, name)
            if sock is not None:
                sock.close()
                setattr(self, name, None)

    async def stop(self) -> None:
        for name in list(self._mcp_tasks):
            await self.remove_mcp(name)
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = self._task = None

    async def __aenter__(self) -> InterceptionEndpoint:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def __enter__(self) -> InterceptionEndpoint:
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            async def main() -> None:
                try:
                    await self.start()
                except BaseException as exc:  # reported to the caller below
                    failure.append(exc)
                    ready.set()
                    return
                ready.set()
                assert self._task is not None
                await self._task

            asyncio.run(main())

        self._thread = threading.Thread(target=serve, name="rolloutgym-endpoint", daemon=True)
        self._thread.start()
        ready.wait(60)
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None

    def records(self) -> list[dict[str, Any]]:
        """Every call of every session, as JSON-ready dicts."""
        return [call.to_dict() for session in self.sessions.values() for call in session.calls]
