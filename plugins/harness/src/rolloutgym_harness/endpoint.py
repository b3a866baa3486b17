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
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from . import wire
from ._model_calls import _SAMPLING_KEYS, ModelCalls
from ._replies import new_id
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
        max_total_calls: the most model calls over all sessions (a harness cannot get more by
            calling under new session names).
        max_completion_tokens: the most tokens sampled over all sessions; the next call is
            refused (429) and the stop reason becomes ``"token_limit"``.
        max_sessions: the most sessions (``/s/NAME/``) the endpoint keeps; a call naming a new
            one past that is refused (429).
        max_body_bytes: the largest request body read; a larger one is refused (413) while it
            is read, never buffered whole.
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
        max_total_calls: int | None = None,
        max_completion_tokens: int | None = None,
        max_sessions: int = 256,
        max_body_bytes: int = 32 * 2**20,
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
        self.max_total_calls = max_total_calls
        self.max_completion_tokens = max_completion_tokens
        self._completion_tokens = 0
        if int(max_sessions) < 1 or int(max_body_bytes) < 1024:
            raise ConfigError("max_sessions must be at least 1 and max_body_bytes at least 1024")
        self.max_sessions = int(max_sessions)
        self.max_body_bytes = int(max_body_bytes)
        self.stored_responses = 256  # the most Responses kept for previous_response_id (oldest dropped)
        self._responses: OrderedDict[str, tuple[str, list[dict[str, Any]]]] = OrderedDict()
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

    def _open_session(self, name: str) -> EndpointSession:
        """The session ``name``, made on its first call unless ``max_sessions`` are open (429)."""
        session = self.sessions.get(name)
        if session is None:
            if len(self.sessions) >= self.max_sessions:
                raise wire.Refused(
                    429, f"this endpoint serves at most {self.max_sessions} sessions; reuse a session name"
                )
            session = self.session(name)
        return session

    def _check_calls(self, session: EndpointSession, name: str) -> None:
        if self.max_calls is not None and len(session.calls) >= self.max_calls:
            session.stop_reason = "max_calls"
            raise wire.Refused(429, f"session {name!r} reached max_calls={self.max_calls}; the episode is over")
        if self.max_completion_tokens is not None and self._completion_tokens >= self.max_completion_tokens:
            for every in self.sessions.values():
                every.stop_reason = "token_limit"
            raise wire.Refused(
                429, f"the endpoint sampled max_completion_tokens={self.max_completion_tokens}; the episode is over"
            )
        if self.max_total_calls is not None and self._calls >= self.max_total_calls:
            for every in self.sessions.values():
                every.stop_reason = "max_calls"
            raise wire.Refused(
                429, f"the endpoint reached max_total_calls={self.max_total_calls} (all sessions); the episode is over"
            )

    def _with_previous(self, request: wire.Request, name: str) -> wire.Request:
        """A Responses request that names ``previous_response_id``: the stored conversation, then its input."""
        previous = request.options.previous_response_id
        if previous is None:
            return request
        stored = self._responses.get(previous)
        if stored is None or stored[0] != name:
            raise ConfigError(
                f"previous_response_id {previous!r} is not known here (a response of another session, sent "
                "with store=false, or no longer kept); send the whole conversation as input instead"
            )
        messages = request.messages
        instructions = request.options.instructions
        if instructions is not None:
            messages = messages[1:]
        head = [{"role": "system", "content": instructions}] if instructions is not None else []
        return replace(request, messages=[*head, *stored[1], *messages])

    def _store(self, request: wire.Request, reply: wire.Reply, name: str) -> None:
        messages = request.messages[1:] if request.options.instructions is not None else request.messages
        answer: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            answer["tool_calls"] = reply.tool_calls
        self._responses[reply.id] = (name, [*messages, answer])
        while len(self._responses) > self.stored_responses:
            self._responses.popitem(last=False)

    async def call(self, request: wire.Request, session_name: str = "default") -> list[wire.Reply]:
        """Answer one model call (``n`` replies) and record it, one record per reply (the HTTP routes call this)."""
        session = self._open_session(session_name)
        async with session.lock:
            self._check_calls(session, session_name)
            self._calls += 1
            request = self._with_previous(request, session_name)
            params = self._params(request.requested)
            started = time.perf_counter()
            handler = self._token_call if self.token_level else self._message_call
            replies, facts = await handler(session, request, params)
            if facts["new_segment"]:
                session.segments += 1
            elif not session.calls:
                session.segments = 1
            seconds = time.perf_counter() - started
            self._completion_tokens += sum(reply.completion_tokens for reply in replies)
            for choice, reply in enumerate(replies):
                if request.api == "responses":
                    reply.id = new_id("resp_")
                    if request.options.store:
                        self._store(request, reply, session_name)
                session.calls.append(self._record(session, request, params, reply, facts, choice, seconds))
            return replies

    def _record(
        self,
        session: EndpointSession,
        request: wire.Request,
        params: Any,
        reply: wire.Reply,
        facts: Mapping[str, Any],
        choice: int,
        seconds: float,
    ) -> CallRecord:
        params = facts.get("params", params)  # as used (max_tokens lowered to fit the context)
        return CallRecord(
            index=len(session.calls),
            api=request.api,
            session=session.name,
            messages=list(facts.get("messages", request.messages)),
            tools=list(facts.get("tools", request.tools)),
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
            text=facts["texts"][choice],
            tool_calls=reply.tool_calls,
            segment=max(session.segments - 1, 0),
            new_segment=bool(facts["new_segment"]) and choice == 0,
            extends=bool(facts["extends"]) and choice == 0,  # the other choices are its siblings
            seconds=seconds,
            upstream=dict(facts["upstreams"][choice]) if "upstreams" in facts else {},
            choice=choice,
            problems=list(reply.problems),
            response_id=reply.id or None,
            prefill=str(facts.get("prefill", "")),
        )

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
        from ._app import QuietOnCancel

        app = QuietOnCancel(self.app())  # a request cut by the endpoint's stop ends without a traceback
        # 127.0.0.1, no proxy in front: no proxy-header middleware per request
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", proxy_headers=False)
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
