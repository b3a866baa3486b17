"""OpenEnv-compatible routes, so ``openenv-core``'s ``EnvClient`` can use a served env.

The base URL of a served env for an OpenEnv client is ``http://HOST:PORT/ENV_ID``
(e.g. ``http://127.0.0.1:8000/toy/guess-v0``); its WebSocket is ``ENV_ID/ws`` and speaks
OpenEnv's messages: ``{"type": "reset", "data": {seed?, episode_id?, task?, options?}}``,
``{"type": "step", "data": ACTION}``, ``{"type": "state"}``, ``{"type": "close"}``,
answered with ``{"type": "observation", "data": {"observation", "reward", "done"}}``,
``{"type": "state", "data": {...}}`` or ``{"type": "error", "data": {"message", "code"}}``.

An OpenEnv observation is a JSON object, so ours is wrapped:
``{"observation": OBS, "info": INFO, "terminated", "truncated", "task_id"}`` (plus
``"tools"`` after a reset, and after a step that changed them). An action that is a
JSON object (a chat message, tool calls in any shape of ``rolloutgym_protocol.toolcalls``)
is sent as is; any other action (text, numbers) as ``{"action": VALUE}``;
``GET ENV_ID/schema`` says which, with the JSON schemas of the wire.

Which task a reset plays (OpenEnv's loop is one ``reset()`` per episode): ``reset(task=X)``
plays task X (an index or an id); a ``reset()`` without a task plays the *next* task:
the one after the connection's last (wrapping around after the last task), task 0 on a
new connection. So ``for _ in range(n): client.reset()`` plays n different tasks in order,
never one task n times; the observation's ``task_id`` names it. A reset that plays the
same task as the last one reuses the connection's env instance.

``openenv-core`` 0.3.0's client sends no headers: put the token in the URL's user info,
``http://rolloutgym:TOKEN@HOST:PORT/ENV_ID`` (the WebSocket client sends it as HTTP Basic
authentication, which the server accepts as the bearer token; see ``_access.py``).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from ._access import owner_of
from ._codec import dumps_text
from ._errors import error_body, status_for
from ._http import json_response

__all__ = ["openenv_routes"]

logger = logging.getLogger("rolloutgym.serve")

_CODES = {
    400: "INVALID_ACTION",
    404: "NOT_FOUND",
    409: "SESSION_ERROR",
    413: "MESSAGE_TOO_LARGE",
    429: "CAPACITY_REACHED",
}


def _action_from(data: Any) -> Any:
    if isinstance(data, dict):
        if set(data) - {"metadata"} == {"action"}:
            return data["action"]
        return {key: value for key, value in data.items() if not (key == "metadata" and value == {})}
    return data


def openenv_routes(server: Any) -> list[Any]:
    """Routes ``{env_id}/ws``, ``/health``, ``/schema``, ``/metadata`` for every served env."""
    routes = _OpenEnvRoutes(server)
    return [
        WebSocketRoute("/{env_path:path}/ws", routes.websocket),
        Route("/{env_path:path}/health", routes.health),
        Route("/{env_path:path}/metadata", routes.metadata),
        Route("/{env_path:path}/schema", routes.schema),
    ]


def _exported(space: Any) -> dict[str, Any]:
    """A space's JSON schema: chat spaces from the protocol's message type, others from ``to_json_schema``."""
    from pydantic import TypeAdapter
    from rolloutgym_protocol.spaces import to_json_schema
    from rolloutgym_protocol.types import Message

    kind = type(space).__name__
    if kind in ("MessageSpace", "ChatSpace"):
        schema = TypeAdapter(Message).json_schema()
        roles = getattr(space, "roles", None)
        if roles:
            schema["properties"]["role"] = {"type": "string", "enum": list(roles)}
        if kind == "ChatSpace":
            definitions = schema.pop("$defs", {})
            schema = {"type": "array", "items": schema, **({"$defs": definitions} if definitions else {})}
        return schema
    try:
        return to_json_schema(space)
    except TypeError:
        return {}


def _wire_action(space: Any) -> dict[str, Any]:
    """The schema of a step message's ``data``: an object action as is, any other as ``{"action": VALUE}``."""
    schema = _exported(space)
    if schema.get("type") == "object":
        return schema
    return {
        "type": "object",
        "properties": {"action": schema, "metadata": {"type": "object"}},
        "required": ["action"],
    }


class _OpenEnvRoutes:
    """The HTTP endpoints; each WebSocket connection is an :class:`_OpenEnvEpisode`."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.manager = server.manager

    async def health(self, request: Request) -> Response:
        try:
            self.manager.catalog.get(request.path_params["env_path"])
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response({"status": "healthy"})

    async def metadata(self, request: Request) -> Response:
        try:
            info = self.manager.catalog.get(request.path_params["env_path"]).info()
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response({"name": info["id"], "description": info["description"], "version": str(info["version"])})

    async def schema(self, request: Request) -> Response:
        try:
            env_id = self.manager.catalog.get(request.path_params["env_path"]).env_id
            owner = owner_of(request.scope)
            session = await self.manager.open(env_id, owner=owner)
            try:
                environment = session.environment
                body = {
                    "action": _wire_action(environment.action_space),
                    "observation": {
                        "type": "object",
                        "properties": {
                            "observation": _exported(environment.observation_space),
                            "info": {"type": "object"},
                            "terminated": {"type": "boolean"},
                            "truncated": {"type": "boolean"},
                            "task_id": {"type": ["string", "null"]},
                            "tools": {"type": ["array", "null"], "items": {"type": "object"}},
                        },
                    },
                    "state": {
                        "type": "object",
                        "properties": {
                            "episode_id": {"type": ["string", "null"]},
                            "step_count": {"type": "integer"},
                            "env_id": {"type": "string"},
                            "task_id": {"type": ["string", "null"]},
                        },
                    },
                }
                tools = session.description().get("tools")
                if tools:
                    body["tools"] = tools  # the definitions a step's tool calls name (any shape of toolcalls)
            finally:
                await self.manager.close(session.id, owner)
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response(body)

    async def websocket(self, websocket: WebSocket) -> None:
        await websocket.accept()
        episode = _OpenEnvEpisode(self.manager, websocket.path_params["env_path"], owner_of(websocket.scope))
        try:
            while True:
                reply = await episode.answer(await websocket.receive_text())
                if reply is None:
                    break
                await websocket.send_text(dumps_text(reply))
        except WebSocketDisconnect:
            pass
        finally:
            await episode.close()


class _OpenEnvEpisode:
    """One OpenEnv WebSocket: a reset opens (or reuses) a session, steps step it."""

    def __init__(self, manager: Any, env_path: str, owner: str) -> None:
        self.manager = manager
        self.env_path = env_path
        self.owner = owner
        self.session_id: str | None = None
        self.task_index: int | None = None  # the task of the connection's last reset
        self.episode_id: str | None = None
        self.steps = 0

    async def answer(self, raw: str) -> dict[str, Any] | None:
        """The reply to one message (``None``: the client asked to close)."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # ValueError: also a number over the int-to-text limit
            return {"type": "error", "data": {"message": f"Invalid JSON: {exc}", "code": "INVALID_JSON"}}
        kind = message.get("type") if isinstance(message, dict) else None
        data = message.get("data") or {} if isinstance(message, dict) else {}
        try:
            if kind == "close":
                return None
            if kind == "reset":
                return await self.reset(data)
            if kind == "step":
                return await self.step(data)
            if kind == "state":
                return self.state()
            return {"type": "error", "data": {"message": f"Unknown message type: {kind}", "code": "UNKNOWN_TYPE"}}
        except Exception as exc:  # noqa: BLE001 - every error is an answer
            code = _CODES.get(status_for(exc), "EXECUTION_ERROR")
            error = error_body(exc)["error"]
            return {"type": "error", "data": {"message": f"{error['type']}: {error['message']}", "code": code}}

    def next_task(self, task: Any) -> int:
        """The task index a reset plays: ``task`` when given, else the one after the last (0 first)."""
        served = self.manager.catalog.get(self.env_path)
        if task is not None:
            return served.resolve_task(task)[0]
        count = len(served.task_ids())
        if self.task_index is None or count == 0:
            return 0
        return (self.task_index + 1) % count

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        index = self.next_task(data.get("task"))
        if self.session_id is not None and index != self.task_index:
            await self.close()  # another task: another env instance; the same task reuses this one
        if self.session_id is None:
            session = await self.manager.open(self.env_path, task=index, transport="openenv", owner=self.owner)
            self.session_id, self.task_index = session.id, index
        session = self.manager.get(self.session_id, self.owner)
        self.episode_id = data.get("episode_id") or uuid.uuid4().hex
        self.steps = 0
        result = await self.manager.reset(
            self.session_id, seed=data.get("seed"), options=data.get("options"), owner=self.owner
        )
        observation = {
            "observation": result["observation"],
            "info": result["info"],
            "terminated": False,
            "truncated": False,
            "task_id": session.task_id,
            "tools": session.description()["tools"],
        }
        return {"type": "observation", "data": {"observation": observation, "reward": None, "done": False}}

    async def step(self, data: Any) -> dict[str, Any]:
        if self.session_id is None:
            raise ValueError("send a reset before the first step")
        result = await self.manager.step(self.session_id, _action_from(data), owner=self.owner)
        self.steps += 1
        observation = {key: result[key] for key in ("observation", "info", "terminated", "truncated")}
        if "tools" in result:
            observation["tools"] = result["tools"]
        done = result["terminated"] or result["truncated"]
        return {"type": "observation", "data": {"observation": observation, "reward": result["reward"], "done": done}}

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"episode_id": self.episode_id, "step_count": self.steps}
        if self.session_id is not None:
            session = self.manager.get(self.session_id, self.owner)
            state.update(env_id=session.served.env_id, task_id=session.task_id)
        return {"type": "state", "data": state}

    async def close(self) -> None:
        if self.session_id is not None:
            session_id, self.session_id = self.session_id, None
            await self.manager.close(session_id, self.owner)
