"""The options of a model call beyond its messages and sampling: ``n``, ``tool_choice``,
``response_format`` and the Responses API's ``previous_response_id`` / ``store``.

Each wire format spells them its own way; :func:`call_options` reads them into one
:class:`CallOptions`, and refuses (``ConfigError``, an HTTP 400 the client shows) what the
endpoint cannot honour: a structured ``response_format`` (the sampler cannot constrain its
output), a ``tool_choice`` naming a tool the request does not define, ``n`` outside 1..MAX_N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["MAX_N", "CallOptions", "call_options"]

MAX_N = 16  # the most choices one chat call may ask for (each one is sampled)


@dataclass(frozen=True)
class CallOptions:
    """``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or the name of one function."""

    n: int = 1
    tool_choice: str = "auto"
    forced_tool: str | None = None  # tool_choice named this function
    previous_response_id: str | None = None
    store: bool = True
    instructions: str | None = None  # the Responses API's (not carried over by previous_response_id)


def _n(body: Mapping[str, Any]) -> int:
    value = body.get("n")
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_N:
        raise ConfigError(f"n must be an integer from 1 to {MAX_N}, got {value!r}")
    return value


def _tool_choice(api: str, value: Any, tool_names: Sequence[str]) -> tuple[str, str | None]:
    """(kind, forced tool name) of each API's ``tool_choice``."""
    if value is None:
        return "auto", None
    name: Any = None
    if isinstance(value, str):
        kind = {"any": "required"}.get(value, value)
    elif isinstance(value, Mapping):
        kind = str(value.get("type", ""))
        if api == "messages":  # {"type": "auto" | "any" | "tool" | "none", "name": ...}
            kind = {"any": "required", "tool": "function"}.get(kind, kind)
            name = value.get("name")
        elif kind == "function":  # chat: {"type": "function", "function": {"name"}}; responses: {"name"}
            function = value.get("function")
            name = function.get("name") if isinstance(function, Mapping) else value.get("name")
        elif kind == "allowed_tools":
            raise ConfigError("tool_choice allowed_tools is not supported here; send the allowed tools as 'tools'")
    else:
        raise ConfigError(f"tool_choice must be a string or an object, got {type(value).__name__}")
    if kind in ("auto", "none", "required"):
        return kind, None
    if kind != "function":
        raise ConfigError(f"tool_choice {value!r} is not understood; use auto, none, required or a function by name")
    if not isinstance(name, str) or name not in tool_names:
        known = ", ".join(tool_names) or "none"
        raise ConfigError(f"tool_choice names the function {name!r}, which is not among the request's tools ({known})")
    return "function", name


def _check_format(api: str, body: Mapping[str, Any]) -> None:
    if api == "responses":
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, Mapping) else None
        where = "text.format"
    else:
        fmt = body.get("response_format") if api == "chat.completions" else body.get("output_format")
        where = "response_format" if api == "chat.completions" else "output_format"
    if fmt is None:
        return
    kind = fmt.get("type") if isinstance(fmt, Mapping) else fmt
    if kind != "text":
        raise ConfigError(
            f"{where} {kind!r}: this endpoint samples from a token policy that cannot constrain its output "
            f"to a format; drop {where} (or ask for it in the prompt), or use type 'text'"
        )


def call_options(api: str, body: Mapping[str, Any], tool_names: Sequence[str]) -> CallOptions:
    """The options of one request body of ``api`` (``chat.completions``, ``responses``, ``messages``)."""
    _check_format(api, body)
    kind, name = _tool_choice(api, body.get("tool_choice"), tool_names)
    if kind in ("required", "function") and not tool_names:
        raise ConfigError(f"tool_choice {kind!r} needs tools; the request defines none")
    previous = body.get("previous_response_id") if api == "responses" else None
    if previous is not None and (not isinstance(previous, str) or not previous or len(previous) > 200):
        raise ConfigError("previous_response_id must be a response id (a string of at most 200 characters)")
    store = body.get("store", True) if api == "responses" else False
    instructions = body.get("instructions") if api == "responses" else None
    return CallOptions(
        n=_n(body) if api == "chat.completions" else 1,
        tool_choice=kind,
        forced_tool=name,
        previous_response_id=previous,
        store=store is not False,
        instructions=str(instructions) if instructions else None,
    )
