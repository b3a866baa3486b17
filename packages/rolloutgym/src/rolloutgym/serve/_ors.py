"""The Open Reward Standard (ORS), served beside the OpenEnv routes and MCP: the ``openreward`` SDK as a client.

Written against the wire of the ``openreward`` SDK 0.1.167 (its client, ``openreward.api``):

* ``POST /create_session`` answers a server-sent-event stream (``task_id`` = the new
  session id, ``end``); ``POST /create`` (header ``X-Session-ID``, body ``{split, index}``
  or ``{task_spec}``, and ``env_name``) opens the env on that task and resets it;
  ``POST /delete``, ``/delete_session``, ``/ping``.
* ``ENV/splits``, ``POST ENV/tasks`` ``{split}``, ``ENV/num_tasks``, ``ENV/task``
  ``{split, index}``, ``ENV/task_range`` ``{split, start?, stop?}``: a task is
  ``{"index", "id", "split"}`` (never the task's data: the answer stays on the server).
* ``ENV/tools`` and ``ENV/task_tools``: the env's tools as ``{name, description,
  input_schema}`` plus ``answer``, the terminal tool (``terminal_tool``): calling it sends
  the final answer (an assistant message without tool calls, or the text of a text env).
* ``ENV/prompt`` (text blocks) and ``ENV/messages`` (the first observation's messages).
* ``POST ENV/call`` ``{name, input}``: one env step, answered as an event stream whose
  ``end`` holds ``{"ok": true, "output": {"blocks", "metadata", "reward", "finished"}}``:
  the reward of that step is in every tool output, ``finished`` is the episode's end.

``ENV`` is the served env id (``environments.get(name=..., variant=ENV_ID)``); without a
variant the SDK sends bare paths and the ``X-Deployment`` header names the env (or the
server serves one env). The SDK sends its key as ``X-API-Key``, which the server takes as
the bearer token (see ``_access.py``). An ORS session is a rolloutgym session of the same
owner; its id (128 random bits) is its handle.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._access import owner_of
from ._codec import dumps_text
from ._errors import ServerBusy, SessionNotFound, error_body, status_for
from ._http import json_response, read_json

__all__ = ["ANSWER_TOOL", "ors_routes"]

ANSWER_TOOL = "answer"
_ENV_SUFFIXES = (
    "splits",
    "tasks",
    "num_tasks",
    "task",
    "task_range",
    "tools",
    "task_tools",
    "prompt",
    "messages",
    "call",
)


def _events(*pairs: tuple[str, str]) -> Response:
    """A whole server-sent-event stream in one body (one write: a chunked stream of small writes
    waited on the peer's delayed acknowledgements, 14 ms a call on loopback)."""
    body = "".join(f"event: {event}\ndata: {data}\n\n" for event, data in pairs)
    return Response(body.encode(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else dumps_text(content)


def _messages_of(observation: Any) -> list[dict[str, Any]]:
    if isinstance(observation, list):
        return [message for message in observation if isinstance(message, dict)]
    return [{"role": "user", "content": _text(observation)}]


class _OrsSession:
    """One ORS session: its rolloutgym session, owner and first observation."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.created = time.monotonic()
        self.session_id: str | None = None
        self.env_id: str | None = None
        self.text_actions = False
        self.first: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []


class _OrsRoutes:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.manager = server.manager
        self.sessions: dict[str, _OrsSession] = {}

    # -- helpers ----------------------------------------------------------------------

    def env_of(self, request: Request) -> Any:
        """The served env a request names: the path's ENV, else ``X-Deployment``, else the only one."""
        named = request.path_params.get("env_path") or request.headers.get("x-deployment")
        catalog = self.manager.catalog
        if named:
            return catalog.get(named)
        ids = catalog.ids()
        if len(ids) != 1:
            raise LookupError("this server serves several envs: name one, environments.get(..., variant=ENV_ID)")
        return catalog.get(ids[0])

    def session_of(self, request: Request) -> _OrsSession:
        sid = request.headers.get("x-session-id", "").strip()
        entry = self.sessions.get(sid)
        if entry is None or entry.owner != owner_of(request.scope):
            raise SessionNotFound(f"no ORS session '{sid[:80]}' on this server; create one with POST /create_session")
        return entry

    @staticmethod
    def split_tasks(served: Any, split: Any) -> list[dict[str, Any]]:
        tasks = served.tasks(items=False) or [{"index": 0, "id": served.task_ids()[0], "split": "train"}]
        listing = [{"index": t["index"], "id": t["id"], "split": t.get("split") or "train"} for t in tasks]
        chosen = [task for task in listing if task["split"] == split]
        if not chosen:
            splits = sorted({task["split"] for task in listing})
            raise ValueError(f"no split {str(split)[:80]!r} in {served.env_id}; its splits: {', '.join(splits)}")
        return chosen

    def tool_listing(self, tools: list[dict[str, Any]], text_actions: bool) -> dict[str, Any]:
        listed = []
        for definition in tools:
            function = definition.get("function", definition)
            listed.append(
                {
                    "name": function["name"],
                    "description": function.get("description") or "",
                    "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
                }
            )
        what = "your answer" if text_actions else "your final answer (ends the episode; it is graded)"
        listed.append(
            {
                "name": ANSWER_TOOL,
                "description": f"Submit {what}.",
                "input_schema": {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                },
            }
        )
        return {"tools": listed, "terminal_tool": {"name": ANSWER_TOOL, "arg": "answer", "description": what}}

    # -- session lifecycle ------------------------------------------------------------

    def prune(self) -> None:
        """Forget ORS sessions whose env was closed (reaped idle) or that never got one within the idle timeout."""
        idle = self.manager.idle_timeout
        deadline = time.monotonic() - (idle if idle is not None else 300.0)
        for sid, entry in list(self.sessions.items()):
            gone = entry.session_id is not None and entry.session_id not in self.manager.sessions
            if gone or (entry.session_id is None and entry.created < deadline):
                self.sessions.pop(sid, None)

    async def create_session(self, request: Request) -> Response:
        owner = owner_of(request.scope)
        self.prune()
        limit = self.manager.max_sessions_per_owner or self.manager.max_sessions
        if sum(entry.owner == owner for entry in self.sessions.values()) >= limit:
            raise ServerBusy(
                f"these credentials hold their maximum of {limit} ORS sessions on this server; delete sessions "
                "you no longer use (POST /delete), or start the server with a larger --max-sessions-per-owner"
            )
        sid = secrets.token_hex(16)
        self.sessions[sid] = _OrsSession(owner)
        return _events(("task_id", sid), ("end", ""))

    async def create(self, request: Request) -> Response:
        entry = self.session_of(request)
        if entry.session_id is not None:
            raise ValueError("this ORS session already has an environment; create another session")
        body = await read_json(request, self.server.config.max_body_bytes)
        named = body.get("env_name") or request.headers.get("x-deployment")
        served = self.manager.catalog.get(named) if named else self.env_of(request)
        spec = body.get("task_spec")
        if isinstance(spec, dict):
            task = spec.get("index", spec.get("id"))
        else:
            index = body.get("index")
            chosen = self.split_tasks(served, body.get("split"))
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(chosen):
                raise IndexError(f"index must be 0 to {len(chosen) - 1} in split {body.get('split')!r}")
            task = chosen[index]["index"]
        session = await self.manager.open(served.env_id, task=task, transport="ors", owner=entry.owner)
        entry.session_id, entry.env_id = session.id, served.env_id
        entry.text_actions = type(session.environment.action_space).__name__ == "TextSpace"
        result = await self.manager.reset(session.id, owner=entry.owner)
        entry.first = _messages_of(result["observation"])
        entry.tools = session.description().get("tools") or []
        return json_response({"sid": request.headers.get("x-session-id", "").strip()})

    async def delete(self, request: Request) -> Response:
        sid = request.headers.get("x-session-id", "").strip()
        entry = self.sessions.get(sid)
        if entry is not None and entry.owner == owner_of(request.scope):
            self.sessions.pop(sid, None)
            if entry.session_id is not None:
                await self.manager.close(entry.session_id, entry.owner)
        return json_response({"sid": sid})

    async def ping(self, request: Request) -> Response:
        entry = self.session_of(request)
        if entry.session_id is not None:
            self.manager.get(entry.session_id, entry.owner).last_used = time.monotonic()
        return json_response({"status": "ok"})

    # -- tasks ------------------------------------------------------------------------

    async def env_route(self, request: Request) -> Response:
        suffix = request.url.path.rsplit("/", 1)[-1]
        if suffix in ("task_tools", "prompt", "messages", "call"):
            return await self.session_route(request, suffix)
        served = self.env_of(request)
        if suffix == "splits":
            tasks = served.tasks(items=False)
            names = list(dict.fromkeys((t.get("split") or "train") for t in tasks)) or ["train"]
            return json_response(
                [
                    {"name": name, "type": name if name in ("train", "validation", "test") else "validation"}
                    for name in names
                ]
            )
        if suffix == "tools":
            session = await self.manager.open(served.env_id, owner=owner_of(request.scope))
            try:
                text = type(session.environment.action_space).__name__ == "TextSpace"
                return json_response(self.tool_listing(session.description().get("tools") or [], text))
            finally:
                await self.manager.close(session.id, owner_of(request.scope))
        body = await read_json(request, self.server.config.max_body_bytes)
        chosen = self.split_tasks(served, body.get("split"))
        if suffix == "tasks":
            return json_response({"tasks": chosen, "env_name": served.env_id})
        if suffix == "num_tasks":
            return json_response({"num_tasks": len(chosen)})
        if suffix == "task":
            index = body.get("index")
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(chosen):
                raise IndexError(f"index must be 0 to {len(chosen) - 1}")
            return json_response({"task": chosen[index], "env_name": served.env_id})
        start, stop = body.get("start"), body.get("stop")
        return json_response({"tasks": chosen[slice(start, stop)], "env_name": served.env_id})

    async def session_route(self, request: Request, suffix: str) -> Response:
        entry = self.session_of(request)
        if entry.session_id is None:
            raise SessionNotFound("this ORS session has no environment yet: POST /create first")
        if suffix == "task_tools":
            return json_response(self.tool_listing(entry.tools, entry.text_actions))
        if suffix == "prompt":
            text = "\n\n".join(_text(message.get("content")) for message in entry.first)
            return json_response([{"type": "text", "text": text}])
        if suffix == "messages":
            return json_response(
                [
                    {"role": m.get("role", "user"), "blocks": [{"type": "text", "text": _text(m.get("content"))}]}
                    for m in entry.first
                ]
            )
        return await self.call(request, entry)

    async def call(self, request: Request, entry: _OrsSession) -> Response:
        body = await read_json(request, self.server.config.max_body_bytes)
        name, arguments = body.get("name"), body.get("input")
        arguments = arguments if isinstance(arguments, dict) else {}
        task_id = body.get("task_id") if isinstance(body.get("task_id"), str) else secrets.token_hex(8)
        if name == ANSWER_TOOL:
            answer = arguments.get("answer")
            text = answer if isinstance(answer, str) else dumps_text(answer)
            action: Any = text if entry.text_actions else {"role": "assistant", "content": text}
        elif entry.text_actions:
            result = {
                "ok": False,
                "error": f"unknown tool {str(name)[:80]!r}; this env takes '{ANSWER_TOOL}'",
                "reason": "not_found",
            }
            return _events(("task_id", task_id), ("end", dumps_text(result)))
        else:
            call = {"id": f"ors_{task_id}", "name": name, "arguments": arguments}
            action = {"role": "assistant", "content": "", "tool_calls": [call]}
        try:
            step = await self.manager.step(entry.session_id, action, owner=entry.owner)
        except Exception as exc:  # noqa: BLE001 - the SDK reads an error event
            error = error_body(exc)["error"]
            return _events(("task_id", task_id), ("error", f"{error['type']}: {error['message']} ({status_for(exc)})"))
        answers = step["observation"] if isinstance(step["observation"], list) else [step["observation"]]
        blocks = [{"type": "text", "text": _text(m.get("content") if isinstance(m, dict) else m)} for m in answers]
        output = {
            "blocks": blocks or [{"type": "text", "text": ""}],
            "metadata": {"info": step["info"], "terminated": step["terminated"], "truncated": step["truncated"]},
            "reward": step["reward"],
            "finished": bool(step["terminated"] or step["truncated"]),
        }
        return _events(("task_id", task_id), ("end", dumps_text({"ok": True, "output": output})))


def ors_routes(server: Any, handled: Any) -> list[Route]:
    """The ORS routes (each behind the token like every route; ``handled`` answers errors as JSON)."""
    routes = _OrsRoutes(server)
    manager = server.manager
    table = [
        Route("/create_session", handled(routes.create_session, manager), methods=["POST"]),
        Route("/create", handled(routes.create, manager), methods=["POST"]),
        Route("/delete", handled(routes.delete, manager), methods=["POST"]),
        Route("/delete_session", handled(routes.delete, manager), methods=["POST"]),
        Route("/ping", handled(routes.ping, manager), methods=["POST"]),
    ]
    for suffix in _ENV_SUFFIXES:
        methods = ["GET"] if suffix in ("splits", "tools", "task_tools", "prompt", "messages") else ["POST"]
        table.append(Route(f"/{suffix}", handled(routes.env_route, manager), methods=methods))
        table.append(Route(f"/{{env_path:path}}/{suffix}", handled(routes.env_route, manager), methods=methods))
    return table
