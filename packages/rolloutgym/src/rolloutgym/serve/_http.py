"""JSON over HTTP for the server's handlers: bodies in, JSON answers and JSON errors out."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ._codec import dumps_text
from ._errors import RequestTooLarge, error_body, status_for
from ._websocket import parse_json

__all__ = ["DEFAULT_MAX_BODY_BYTES", "dumps", "error_response", "json_response", "read_json"]

logger = logging.getLogger("rolloutgym.serve")

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


def dumps(value: Any) -> bytes:
    """:func:`dumps_text` as UTF-8 bytes (an HTTP body)."""
    return dumps_text(value).encode()


def json_response(value: Any, status: int = 200) -> Response:
    return Response(dumps(value), status_code=status, media_type="application/json")


def error_response(exc: BaseException) -> Response:
    status = status_for(exc)
    if status >= 500:
        logger.warning("env error", extra={"event": "error", "error": error_body(exc)["error"]}, exc_info=exc)
    return json_response(error_body(exc), status)


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body (``{}`` when empty); 400/413 on bad or big bodies."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLarge(
            f"request body of {declared} bytes is over this server's limit of {limit} bytes (--max-body-bytes)"
        )
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestTooLarge(f"request body is over this server's limit of {limit} bytes (--max-body-bytes)")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    value = parse_json(raw, "request body")
    if not isinstance(value, dict):
        raise ValueError(f"request body must be a JSON object, got {type(value).__name__}")
    return value
