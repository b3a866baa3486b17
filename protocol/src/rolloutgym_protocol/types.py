"""Value types for chat messages and tool calls, as TypedDicts usable on Python 3.11.

They are built on ``typing_extensions.TypedDict`` because pydantic refuses
``typing.TypedDict`` before Python 3.12.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict
from typing_extensions import TypedDict

__all__ = [
    "AudioContentPart",
    "Chat",
    "ContentPart",
    "ImageContentPart",
    "Message",
    "Role",
    "TextContentPart",
    "ToolCall",
]

Role = str


class ToolCall(TypedDict):
    """``{"name": ..., "arguments": {...}, "id"?: ...}`` with plain argument objects."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    name: str
    arguments: dict[str, Any]
    id: NotRequired[str]


class TextContentPart(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    type: Literal["text"]
    text: str


class ImageContentPart(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    type: Literal["image"]
    url: str
    alt: NotRequired[str]


class AudioContentPart(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    type: Literal["audio"]
    url: str
    format: NotRequired[str]


ContentPart = TextContentPart | ImageContentPart | AudioContentPart


class Message(TypedDict):
    """A chat message; ``content`` is a string or a list of typed parts."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    role: str
    content: str | list[ContentPart]
    tool_calls: NotRequired[list[ToolCall]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


Chat = list[Message]
