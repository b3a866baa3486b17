"""MCP servers as tool sources of env files: the sessions (settings: :mod:`rolloutgym_workflow.mcp_settings`;
tool results as tool messages: :mod:`rolloutgym_workflow.mcp_results`).

An env file's ``config.mcp`` names a server: ``command`` (a stdio server, one process per
episode) or ``url`` (a streamable HTTP server, one MCP session per episode). Sessions use
the official ``mcp`` SDK's :class:`mcp.Client`. Each session is owned by one task on the
event loop that opened it (the episode's loop: the SDK's transports are anyio task groups,
entered and left by that one task, while an env may be stepped and closed from other tasks);
a call from another loop or thread hops to that loop (:func:`run_on`). Sessions shared by
all episodes (``per_episode: false``) and the tool listing read before any reset live on a
dedicated loop in a daemon thread (the *MCP loop*). Keeping an episode's session on the
episode's loop spares every call two thread switches and the GIL handoffs between two busy
threads; ``benchmarks/mcp_env_step.py`` compares both designs with the bare SDK client.

Failures of the server (it does not start, does not answer, exits mid-episode) raise
:class:`McpServerError` with the tail of its stderr; failures of a tool (``isError``, a
JSON-RPC error for a call) are tool outcomes the model reads.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.display import safe_str
from rolloutgym_protocol.errors import RolloutGymError

from .mcp_results import McpToolResult, convert_result
from .mcp_settings import McpSettings

__all__ = [
    "McpServerError",
    "McpSession",
    "require_mcp",
    "run_on",
    "run_on_mcp_loop",
]

_log = logging.getLogger("rolloutgym.workflow.mcp")


def _install_hint() -> str:
    return (
        f"MCP tools in env files need the official MCP SDK (mcp>=2.0): {pip_install('rolloutgym-workflow', 'mcp')} "
        "(or pip install 'mcp>=2.0')"
    )


_STDERR_TAIL = 2_000
_CLOSE_TIMEOUT = 15.0  # the SDK's stdio shutdown: stdin close, 2 s grace, SIGTERM, 2 s, SIGKILL


class McpServerError(RolloutGymError, RuntimeError):
    """An env file's MCP server failed: it did not start, did not answer in time, or stopped mid-episode."""


def require_mcp() -> None:
    """Import the MCP SDK or raise :class:`ImportError` with the install hint."""
    try:
        import mcp  # noqa: F401
        import mcp_types  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{_install_hint()} ({exc})") from exc
    from mcp import Client

    if not hasattr(Client, "call_tool"):  # pragma: no cover - an mcp 1.x install
        raise ImportError(_install_hint() + "; the installed mcp is older")


# -- the MCP loop -------------------------------------------------------------------------

_LOOP_LOCK = threading.Lock()
_LOOP: asyncio.AbstractEventLoop | None = None
_OPEN: set[McpSession] = set()


def _mcp_loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="rolloutgym-mcp", daemon=True)
            thread.start()
            _LOOP = loop
        return _LOOP


def _submit(coroutine: Awaitable[Any]) -> concurrent.futures.Future[Any]:
    return asyncio.run_coroutine_threadsafe(coroutine, _mcp_loop())  # type: ignore[arg-type]


async def run_on_mcp_loop(coroutine: Awaitable[Any]) -> Any:
    """Await ``coroutine`` on the MCP loop from any other event loop."""
    return await asyncio.wrap_future(_submit(coroutine))


async def run_on(loop: asyncio.AbstractEventLoop | None, coroutine: Any) -> Any:
    """Await ``coroutine`` on ``loop``: directly when it is the running loop, else through a thread hop."""
    if loop is None or loop is asyncio.get_running_loop():
        return await coroutine
    if loop.is_closed() or not loop.is_running():
        coroutine.close()
        raise McpServerError(
            "the event loop that opened this MCP session has stopped; reset the env on the loop that steps it"
        )
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, loop))


def run_on_mcp_loop_sync(coroutine: Awaitable[Any], timeout: float | None = None) -> Any:
    """Run ``coroutine`` on the MCP loop from synchronous code and wait for it."""
    return _submit(coroutine).result(timeout)


@atexit.register
def _close_all() -> None:
    """At interpreter exit, stop every server still open on a running loop (no orphaned processes)."""
    futures = []
    for session in list(_OPEN):
        loop = session.loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            futures.append(asyncio.run_coroutine_threadsafe(session.close(), loop))
    if futures:
        _done, pending = concurrent.futures.wait(futures, timeout=_CLOSE_TIMEOUT + 5.0)
        if pending:  # pragma: no cover - best effort at exit
            _log.warning("could not close %d MCP session(s) at exit", len(pending))


# -- sessions ---------------------------------------------------------------------------------

Request = Callable[[Any], Awaitable[Any]]


class McpSession:
    """One MCP client session (for a ``command``, one server process), owned by one task on the MCP loop.

    Create it, then ``await session.open()`` (the tools it lists) on the loop that owns it;
    ``session.call(name, arguments)`` and ``session.close()`` run on that loop too (from
    elsewhere: ``await run_on(session.loop, session.call(...))``). ``close`` is idempotent
    and stops the server process even when the episode failed.
    """

    def __init__(self, settings: McpSettings) -> None:
        self.settings = settings
        self.tools: list[Any] = []
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop that owns the session
        self._queue: asyncio.Queue[tuple[Request, asyncio.Future[Any]] | None] | None = None
        self._ready: asyncio.Future[list[Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: Any = None
        self._stderr: Any = None
        self._failure: BaseException | None = None
        self._closing = False

    @property
    def alive(self) -> bool:
        """Open and serving (not closed, not failed)."""
        return not self._closing and self._task is not None and not self._task.done()

    # Everything below runs on the session's loop.

    async def open(self) -> list[Any]:
        """Start (or connect to) the server and list its tools; raises :class:`McpServerError`."""
        require_mcp()
        loop = self.loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        self._ready = loop.create_future()
        if self.settings.command is not None:
            self._stderr = tempfile.TemporaryFile(mode="w+b")
        self._task = loop.create_task(self._own())
        _OPEN.add(self)
        try:
            self.tools = await asyncio.wait_for(asyncio.shield(self._ready), self.settings.timeout)
        except TimeoutError:
            await self.close()
            raise McpServerError(
                self._message(
                    f"did not start and list its tools within {self.settings.timeout:g} s "
                    "(raise config.mcp.timeout if it is slow to start)"
                )
            ) from None
        except McpServerError:
            await self.close()
            raise
        return self.tools

    async def _own(self) -> None:
        """The owner task: enter the client, list the tools, serve requests until closed."""
        import contextlib

        import anyio
        from mcp import Client

        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with contextlib.AsyncExitStack() as stack:
                    target = await self._target(stack)
                    client = await stack.enter_async_context(Client(target, mode=self.settings.protocol, cache=None))
                    tools = await _list_tools(client)
                    if self._ready is not None and not self._ready.done():
                        self._ready.set_result(tools)
                    await self._serve(client)
        except BaseException as exc:  # noqa: BLE001 - recorded and raised to the waiters as McpServerError
            self._failure = exc
            self._fail_waiters(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._fail_waiters(None)

    async def _serve(self, client: Any) -> None:
        assert self._queue is not None
        while True:
            item = await self._queue.get()
            if item is None:
                return
            request, future = item
            if future.done():
                continue
            try:
                value = await request(client)
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
                if _fatal(exc):
                    raise
            else:
                if not future.done():
                    future.set_result(value)

    def _fail_waiters(self, exc: BaseException | None) -> None:
        error = self._server_error(exc)
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(error)
            self._ready.exception()  # retrieved: open() raises its own message
        while self._queue is not None and not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None and not item[1].done():
                item[1].set_exception(error)

    def _server_error(self, exc: BaseException | None) -> McpServerError:
        if isinstance(exc, McpServerError):
            return exc
        if exc is None:
            return McpServerError(self._message("is closed"))
        return McpServerError(self._message(f"failed: {_describe(exc)}"))

    async def _target(self, stack: Any) -> Any:
        """What :class:`mcp.Client` connects to: a stdio transport, or the URL (with headers: an HTTP client)."""
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        settings = self.settings
        if settings.command is not None:
            parameters = StdioServerParameters(
                command=settings.command[0], args=list(settings.command[1:]), env=dict(settings.env), cwd=settings.cwd
            )
            return stdio_client(parameters, errlog=self._stderr)
        if not settings.headers:
            return settings.url
        import httpx2  # the HTTP client of the mcp 2.x transports

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(settings.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(str(settings.url), http_client=http)

    async def call(self, name: str, arguments: Mapping[str, Any], *, timeout: float | None = None) -> McpToolResult:
        """``tools/call``: the result as a tool message; a server failure raises :class:`McpServerError`."""
        from mcp import MCPError

        limit = self.settings.call_timeout if timeout is None else timeout

        async def request(client: Any) -> Any:
            return await client.call_tool(name, dict(arguments), read_timeout_seconds=limit)

        try:
            result = await self._request(request, limit + 5.0)
        except MCPError as exc:
            from mcp_types import REQUEST_TIMEOUT

            if exc.code == REQUEST_TIMEOUT:
                raise self._died(f"did not answer a call of {name!r} within {limit:g} s", exc) from None
            if _fatal(exc):
                raise self._died(f"stopped while calling {name!r}", exc) from None
            return McpToolResult(f"{name}: {exc.message}", None, True)
        except TimeoutError:
            raise self._died(f"did not answer a call of {name!r} within {limit:g} s", None) from None
        except McpServerError:
            raise
        except Exception as exc:
            raise self._died(f"failed while calling {name!r}: {_describe(exc)}", exc) from None
        return convert_result(result)

    def _died(self, what: str, exc: BaseException | None) -> McpServerError:
        error = McpServerError(self._message(what))
        asyncio.get_running_loop().create_task(self.close())
        return error

    async def _request(self, request: Request, timeout: float) -> Any:
        if self._closing or self._task is None or self._task.done() or self._queue is None:
            raise self._server_error(self._failure)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((request, future))
        return await asyncio.wait_for(future, timeout)

    async def close(self) -> None:
        """Stop the session (and the server process); safe to call more than once."""
        _OPEN.discard(self)
        if self._closing:
            if self._task is not None:
                await asyncio.wait({self._task}, timeout=_CLOSE_TIMEOUT)
            return
        self._closing = True
        task = self._task
        if task is not None and not task.done():
            pending: set[Any] = {task}
            if self._queue is not None and self._ready is not None and self._ready.done():
                self._queue.put_nowait(None)  # a running session leaves its client context itself
                _done, pending = await asyncio.wait({task}, timeout=2.0)
            if pending and self._scope is not None:
                self._scope.cancel()
                await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT)
        if self._stderr is not None:
            self._stderr.close()

    def stderr_tail(self) -> str:
        """The last characters the server wrote to its stderr (stdio servers)."""
        handle = self._stderr
        if handle is None or handle.closed:
            return ""
        try:
            size = os.fstat(handle.fileno()).st_size
            data = os.pread(handle.fileno(), _STDERR_TAIL, max(0, size - _STDERR_TAIL))
        except OSError:
            return ""
        return data.decode("utf-8", "replace").strip()

    def _message(self, what: str) -> str:
        text = f"MCP server ({self.settings.describe()}) {what}"
        tail = self.stderr_tail()
        if tail:
            text += "\n--- its stderr (last lines) ---\n" + tail
        return text


async def _list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(1000):
        page = await client.list_tools(cursor=cursor)
        tools += list(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _fatal(exc: BaseException) -> bool:
    """Whether an error from a request means the connection is gone (not just this call failed)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    if isinstance(exc, MCPError):
        return exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)
    return True


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions[:3])
    if isinstance(exc, FileNotFoundError):
        return f"the executable was not found ({exc.filename or exc}); check config.mcp.command"
    text = safe_str(exc) or type(exc).__name__
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        text = message
    return f"{type(exc).__name__}: {text}"


def tool_names(tools: Sequence[Any]) -> list[str]:
    """The names of listed MCP tools."""
    return [tool.name for tool in tools]
