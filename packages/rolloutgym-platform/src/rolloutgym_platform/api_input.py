"""The API's edge: every value a request carries is checked here before an endpoint uses it.

* Bodies: the key is checked first (an unauthenticated request is answered 401 without its body being read),
  then the body is read with a cap: a ``Content-Length`` above it is answered 413 at once, and a body sent
  without one (chunked) is refused as soon as the bytes received pass the cap. Nothing larger is ever buffered.
* Identifiers: run and job ids have one shape (``run_`` + 12 hex digits); slugs are letters, digits and
  ``- _ . /`` without an empty, ``.`` or ``..`` segment, 200 characters at most.
* Query values: whole numbers and finite numbers within their range, else 400 (never a 500, never queued).
"""

from __future__ import annotations

import json
import math
from typing import Any

from rolloutgym.platform.envfiles import SLUG
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from .api_common import ApiError, _key
from .models import ApiKey
from .trust import ROW_ID

MAX_BODY = 1 << 20
"""The largest body of a request other than a push (1 MiB): a run or a job is a few hundred bytes."""

MAX_PUSH = 32 << 20
"""The largest push body by default (``platform serve --max-push-mb``): the env file and its data, base64."""

MAX_N = 1024
"""The most rollouts per task one run may ask for (``n``)."""

MAX_LIMIT = 100_000
"""The most tasks one run (``limit``) or one listing (``?limit=``) may ask for."""


def _too_large(size: int, limit: int, push: bool) -> ApiError:
    fix = (
        "push smaller data files, or start the platform with a larger 'platform serve --max-push-mb'"
        if push
        else "send a smaller request"
    )
    return ApiError(413, f"the request body is over {limit:,} bytes ({size:,} so far); {fix}")


async def read_json(request: Request, scope: str, limit: int = MAX_BODY) -> tuple[ApiKey, dict[str, Any]]:
    """The request's key (checked for ``scope`` first: 401/403 before any of the body is read) and its JSON body,
    read with a cap of ``limit`` bytes (413 above it, from ``Content-Length`` or as the bytes arrive)."""
    key = await run_in_threadpool(_key, request, scope)
    push = limit > MAX_BODY
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(400, "the Content-Length header is not a whole number")
        if int(declared) > limit:
            raise _too_large(int(declared), limit, push)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large(len(body), limit, push)
    try:
        parsed = json.loads(bytes(body))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "the request body is not JSON") from None
    if not isinstance(parsed, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return key, parsed


def row_id(value: Any, what: str) -> str:
    """A run or job id of the right shape (``run_`` or ``job_`` and 12 hex digits); 400 otherwise."""
    if not isinstance(value, str) or not ROW_ID.match(value) or not value.startswith(what + "_"):
        shown = repr(value)[:60] if isinstance(value, str) else type(value).__name__
        raise ApiError(400, f"{shown} is not a {what} id: they look like {what}_0123456789ab")
    return value


def slug(value: Any, what: str = "env slug") -> str:
    """An env slug: letters, digits, ``- _ . /``, at most 200 characters, no empty, ``.`` or ``..`` segment."""
    if not isinstance(value, str) or not value:
        raise ApiError(400, f"give the {what}, e.g. refund-agent or toy/arith-v0")
    if not SLUG.match(value) or any(part in ("", ".", "..") for part in value.split("/")):
        raise ApiError(
            400,
            f"{value[:60]!r} is not a usable {what}: letters, digits and - _ . / (no '..', no empty part), "
            "at most 200 characters",
        )
    return value


def whole(value: Any, name: str, low: int, high: int, *, query: bool = False) -> int:
    """A whole number in ``[low, high]`` (a JSON number; with ``query`` a query string's digits); 400 naming the
    range otherwise."""
    number = value
    if isinstance(value, str) and query:
        number = int(value) if value.strip().lstrip("-").isdigit() and len(value) < 20 else None
    if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
        raise ApiError(400, f"{name} must be a whole number from {low} to {high:,}, got {str(value)[:40]!r}")
    return number


def finite(value: Any, name: str, low: float, high: float, *, query: bool = False) -> float:
    """A finite number in ``[low, high]`` (a JSON number; with ``query`` a query string); 400 otherwise."""
    number: Any = value
    if isinstance(value, str) and query:
        try:
            number = float(value) if len(value) < 40 else None
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        number = None
    if number is None or not math.isfinite(number) or not low <= number <= high:
        raise ApiError(400, f"{name} must be a number from {low:g} to {high:g}, got {str(value)[:40]!r}")
    return float(number)


def query_whole(request: Request, name: str, default: int, low: int, high: int) -> int:
    value = request.query_params.get(name)
    return default if value is None else whole(value, name, low, high, query=True)


def query_text(request: Request, name: str, limit: int = 200) -> str | None:
    """A short printable query value (None when absent); 400 for control characters or a value over ``limit``."""
    value = request.query_params.get(name)
    if value is not None and (len(value) > limit or not value.isprintable()):
        raise ApiError(400, f"the query value {name} must be at most {limit} printable characters")
    return value


def _task_list(value: Any) -> list[Any]:
    if not isinstance(value, list) or len(value) > MAX_LIMIT:
        raise ApiError(400, f"tasks must be a list of at most {MAX_LIMIT:,} task ids or indices")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ApiError(400, f"tasks: {str(item)[:40]!r} is not a task id or index")
        if isinstance(item, str) and (len(item) > 200 or not item.isprintable()):
            raise ApiError(400, f"tasks: {item[:40]!r} is not a task id (at most 200 printable characters)")
    return value


def _word(value: Any, name: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 64 or not value.isprintable():
        raise ApiError(400, f"{name} must be a short name such as train, dev or test, got {str(value)[:40]!r}")
    return value


_RUN_OPTION_CHECKS: dict[str, Any] = {
    "limit": lambda value: whole(value, "limit", 1, MAX_LIMIT),
    "seed": lambda value: whole(value, "seed", -(2**63), 2**63 - 1),
    "split": lambda value: _word(value, "split"),
    "tasks": _task_list,
    "max_steps": lambda value: whole(value, "max_steps", 1, 100_000),
    "timeout": lambda value: finite(value, "timeout", 0.001, 7 * 86400.0),
    "concurrency": lambda value: whole(value, "concurrency", 1, 1024),
    "pass_threshold": lambda value: finite(value, "pass_threshold", -1e12, 1e12),
    "policy_options": lambda value: value,  # checked by trust.policy_runs_code
}


def run_options(body: dict[str, Any]) -> dict[str, Any]:
    """The run options of a ``POST /api/runs`` body, each checked for type and range (400 otherwise)."""
    return {name: check(body[name]) for name, check in _RUN_OPTION_CHECKS.items() if body.get(name) is not None}
