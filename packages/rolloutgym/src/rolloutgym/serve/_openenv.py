"""OpenEnv-compatible routes, so ``openenv-core``'s ``EnvClient`` can use a served env.

The base URL of a served env for an OpenEnv client is ``http://HOST:PORT/ENV_ID``
(e.g. ``http://127.0.0.1:8000/toy/guess-v0``); its WebSocket is ``ENV_ID/ws`` and speaks
OpenEnv's messages: ``{"type": "reset", "data": {seed?, episode_id?, task?, options?}}``,
``{"type": "step", "data": ACTION}``, ``{"type": "state"}``, ``{"type": "close"}``,
answered with ``{"type": "observation", "data": {"observation", "reward", "done"}}``,
``{"type": "state", "data": {...}}`` or ``{"type": "error", "data": {"message", "code"}}``.

An OpenEnv observation is a JSON object, so ours is wrapped:
``{"observation": OBS, "info": INFO, "terminated", "truncated", "task_id"}`` (plus
``"tools"`` after a reset). An action that is a JSON object (a chat message) is sent as
is; any other action (text, numbers) as ``{"action": VALUE}``.
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

from ._errors import error_body, status_for

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
    from .app import dumps, json_response

    manager = server.manager

    def served(path: str) -> Any:
        return manager.catalog.get(path)

    async def health(request: Request) -> Response:
        try:
            served(request.path_params["env_path"])
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response({"status": "healthy"})

    async def metadata(request: Request) -> Response:
        try:
            info = served(request.path_params["env_path"]).info()
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response({"name": info["id"], "description": info["description"], "version": str(info["version"])})

    async def schema(request: Request) -> Response:
        try:
            env_id = served(request.path_params["env_path"]).env_id
            session = await manager.open(env_id)
            try:
                from rolloutgym_protocol.spaces import to_json_schema

                def exported(space: Any) -> dict[str, Any]:
                    try:
                        return to_json_schema(space)
                    except TypeError:
                        return {}

                body = {
                    "action": exported(session.environment.action_space),
                    "observation": {
                        "type": "object",
                        "properties": {
                            "observation": exported(session.environment.observation_space),
                            "info": {"type": "object"},
                        },
                    },
                    "state": {
                        "type": "object",
                        "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"}},
                    },
                }
            finally:
                await manager.close(session.id)
        except Exception as exc:  # noqa: BLE001
            return json_response(error_body(exc), status_for(exc))
        return json_response(body)

    async def websocket(websocket: WebSocket) -> None:
        if not server.authorized(websocket.headers):
            await websocket.close(code=1008, reason="missing or wrong bearer token")
            return
        env_path = websocket.path_params["env_path"]
        await websocket.accept()
        session_id: str | None = None
        episode_id: str | None = None
        steps = 0
        try:
            while True:
                raw = await websocket.receive_text()
                try:
                    try:
                        message = json.loads(raw)
                    except (json.JSONDecodeError, RecursionError) as exc:
                        await websocket.send_text(
                            json.dumps(
                                {"type": "error", "data": {"message": f"Invalid JSON: {exc}", "code": "INVALID_JSON"}}
                            )
                        )
                        continue
                    kind = message.get("type") if isinstance(message, dict) else None
                    data = message.get("data") or {} if isinstance(message, dict) else {}
                    if kind == "close":
                        break
                    if kind == "reset":
                        if session_id is not None:
                            await manager.close(session_id)
                            session_id = None
                        session = await manager.open(env_path, task=data.get("task"), transport="openenv")
                        session_id = session.id
                        episode_id = data.get("episode_id") or uuid.uuid4().hex
                        steps = 0
                        result = await manager.reset(session_id, seed=data.get("seed"), options=data.get("options"))
                        observation = {
                            "observation": result["observation"],
                            "info": result["info"],
                            "terminated": False,
                            "truncated": False,
                            "task_id": session.task_id,
                            "tools": session.description()["tools"],
                        }
                        reply = {
                            "type": "observation",
                            "data": {"observation": observation, "reward": None, "done": False},
                        }
                    elif kind == "step":
                        if session_id is None:
                            raise ValueError("send a reset before the first step")
                        result = await manager.step(session_id, _action_from(data))
                        steps += 1
                        observation = {key: result[key] for key in ("observation", "info", "terminated", "truncated")}
                        reply = {
                            "type": "observation",
                            "data": {
                                "observation": observation,
                                "reward": result["reward"],
                                "done": result["terminated"] or result["truncated"],
                            },
                        }
                    elif kind == "state":
                        state = {"episode_id": episode_id, "step_count": steps}
                        if session_id is not None:
                            session = manager.get(session_id)
                            state.update(env_id=session.served.env_id, task_id=session.task_id)
                        reply = {"type": "state", "data": state}
                    else:
                        reply = {
                            "type": "error",
                            "data": {"message": f"Unknown message type: {kind}", "code": "UNKNOWN_TYPE"},
                        }
                except Exception as exc:  # noqa: BLE001 - every error is an answer
                    status = status_for(exc)
                    reply = {
                        "type": "error",
                        "data": {
                            "message": f"{type(exc).__name__}: {exc}",
                            "code": _CODES.get(status, "EXECUTION_ERROR"),
                        },
                    }
                await websocket.send_text(dumps(reply).decode())
        except WebSocketDisconnect:
            pass
        finally:
            if session_id is not None:
                await manager.close(session_id)

    return [
        WebSocketRoute("/{env_path:path}/ws", websocket),
        Route("/{env_path:path}/health", health),
        Route("/{env_path:path}/metadata", metadata),
        Route("/{env_path:path}/schema", schema),
    ]
