"""One session: an env instance leased to one client, and what it last sent that client.

A :class:`Session` describes its env to the client (spaces, tools, ids, callable methods)
and, after each call, sends only what changed (``extras()``); the sessions of a served env
share the JSON encoding of equal tools.
"""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import AsyncEnv, find_attribute

from ._codec import encode_space, encode_value, value_decoder
from ._disclosure import Disclosure
from .catalog import ServedEnv

__all__ = ["CALLABLE_METHODS", "LOCAL_OWNER", "Session"]

# Methods a client may call on a session's env (the protocol methods policies use).
CALLABLE_METHODS = ("oracle_action", "null_action")

# The owner of sessions opened in process (no request, so no credentials): no request's
# owner (a hex digest, see _access.py) can equal it.
LOCAL_OWNER = "local"

# env id -> (a copy of the tools last encoded, their encoding); the encoding is never mutated.
_TOOLS_CACHE: dict[str, tuple[Any, Any]] = {}


_UNCOPYABLE = object()
_NO_COPY = object()  # _sent(): make the copy
_NOT_YET = object()  # Session.decoded_space before the first action


def attribute_reader(environment: Any, name: str) -> Any:
    """``find_attribute(environment, name)`` as a function of no arguments, for a session's every call.

    The layers (each wrapper's ``env``) and their classes stay as they are for a session's
    life, so they are walked once: the reader looks only at the instance dictionaries of the
    layers above the first class that has ``name`` (an env may set the attribute in
    ``reset``), then reads it there, in the order ``find_attribute`` does.
    """
    dictionaries: list[dict[str, Any]] = []
    seen: set[int] = set()
    current, holder = environment, None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(type(current), name, None) is not None:
            holder = current
            break
        dictionary = getattr(current, "__dict__", None)
        if dictionary is None:
            break
        dictionaries.append(dictionary)
        current = getattr(current, "env", None) if "env" in dictionary else None

    def read() -> Any:
        for dictionary in dictionaries:
            if name in dictionary:
                return dictionary[name]
        return getattr(holder, name) if holder is not None else None

    return read


def _length(tools: Any) -> int:
    """How many tools (for tools that cannot be copied: a change in place is noticed by length only)."""
    return len(tools) if isinstance(tools, (list, tuple, dict)) else -1


def _snapshot(tools: Any) -> Any:
    """A copy of ``tools`` as sent, so that an env editing its own list in place is noticed."""
    if tools is None:
        return None
    try:
        return copy.deepcopy(tools)
    except Exception:  # noqa: BLE001 - such tools are compared by identity and length
        return _UNCOPYABLE


@dataclass
class Session:
    """One env instance leased to one client."""

    id: str
    served: ServedEnv
    task_index: int
    task_id: str
    environment: AsyncEnv[Any, Any]
    transport: str = "http"
    asynchronous: bool = False
    owner: str = LOCAL_OWNER
    disclosure: Disclosure = field(default_factory=lambda: Disclosure(False))
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    steps: int = 0
    busy: int = 0
    closed: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # What the client was last sent (``extras()`` sends what differs): the tools object, a copy
    # of its content (shared with the served env's encoding cache when equal) and its length.
    sent_tools: Any = None
    sent_tools_copy: Any = None
    sent_tools_length: int = -1
    sent_spaces: tuple[Any, Any] = (None, None)
    # find_attribute(environment, "next_stop_strings" | "tools"), with the env's layers walked once
    read_stop_strings: Any = field(default=None, repr=False)
    read_tools: Any = field(default=None, repr=False)

    decoded_space: Any = field(default=_NOT_YET, repr=False)  # the action space decode_actions is for
    decode_actions: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.read_stop_strings = attribute_reader(self.environment, "next_stop_strings")
        self.read_tools = attribute_reader(self.environment, "tools")

    def decode_action(self, action: Any) -> Any:
        """A step's action from JSON to the env's action space (``decode_value``)."""
        space = self.environment.action_space
        if space is not self.decoded_space:  # the env may change its action space
            self.decoded_space, self.decode_actions = space, value_decoder(space)
        return self.decode_actions(action)

    def description(self) -> dict[str, Any]:
        """What a client needs to stand in for the env: spaces, tools, ids, callable methods."""
        environment = self.environment
        tools = find_attribute(environment, "tools")
        metadata = find_attribute(environment, "metadata")
        encoded_tools = self.served_tools(tools)
        cached = _TOOLS_CACHE.get(self.served.env_id)
        self._sent(tools, cached[0] if cached is not None and tools is not None and tools == cached[0] else _NO_COPY)
        return {
            "session": self.id,
            "env_id": self.served.env_id,
            "async": self.asynchronous,
            "task_index": self.task_index,
            "task_id": self.task_id,
            "observation_space": encode_space(environment.observation_space),
            "action_space": encode_space(environment.action_space),
            "tools": encoded_tools,
            "methods": self.disclosure.methods(
                [name for name in CALLABLE_METHODS if find_attribute(environment, name) is not None]
            ),
            "metadata": encode_value(self.disclosure.metadata(metadata)) if isinstance(metadata, dict) else {},
            "env": self.served.info(),
        }

    def served_tools(self, tools: Any) -> Any:
        """``tools`` as JSON; the sessions of a served env share the encoding while their tools are equal."""
        if tools is None:
            return None
        cached = _TOOLS_CACHE.get(self.served.env_id)
        if cached is not None and (tools is cached[0] or (_length(tools) == _length(cached[0]) and tools == cached[0])):
            return cached[1]
        encoded = encode_value(tools)
        try:
            _TOOLS_CACHE[self.served.env_id] = (copy.deepcopy(tools), encoded)
        except Exception:  # noqa: BLE001 - tools that cannot be copied are encoded every time
            _TOOLS_CACHE.pop(self.served.env_id, None)
        return encoded

    def _sent(self, tools: Any, copied: Any = None) -> None:
        self.sent_tools = tools
        self.sent_tools_copy = _snapshot(tools) if copied is _NO_COPY else copied
        self.sent_tools_length = _length(tools)
        self.sent_spaces = (self.environment.observation_space, self.environment.action_space)

    def extras(self) -> dict[str, Any]:
        """Per-call state the LLM loop reads from the env (``next_stop_strings``), and what changed."""
        environment = self.environment
        stop = self.read_stop_strings()
        extras = {} if stop is None else {"next_stop_strings": list(stop)}
        tools = self.read_tools()
        observation_space, action_space = environment.observation_space, environment.action_space
        sent = self.sent_tools_copy
        if sent is _UNCOPYABLE:
            changed = _length(tools) != self.sent_tools_length or (
                tools is not self.sent_tools and tools != self.sent_tools
            )
        else:
            changed = tools != sent  # also a list the env edited in place
        if not changed and observation_space is self.sent_spaces[0] and action_space is self.sent_spaces[1]:
            return extras  # the common case: nothing changed, nothing more to send
        if changed:
            extras["tools"] = encode_value(tools) if tools is not None else None
        if observation_space is not self.sent_spaces[0]:
            extras["observation_space"] = encode_space(observation_space)
        if action_space is not self.sent_spaces[1]:
            extras["action_space"] = encode_space(action_space)
        self._sent(tools, _NO_COPY if changed else sent)
        return extras
