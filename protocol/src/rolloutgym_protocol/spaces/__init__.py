"""Spaces for LLM environments: ``text``, ``tokens``, ``messages``, ``tools``.

Structured values are plain dicts and lists validated by pydantic. ``to_json_schema``
exports a space for a model's tool definition.
"""

from . import messages, text, tokens, tools
from ._pydantic import PydanticSpace
from .messages import ChatSpace, MessageSpace
from .schema import to_json_schema
from .text import TextSpace
from .tools import ToolCallSpace

Text = TextSpace
Message = MessageSpace
Chat = ChatSpace
ToolCall = ToolCallSpace

__all__ = [
    "Chat",
    "ChatSpace",
    "Message",
    "MessageSpace",
    "PydanticSpace",
    "Text",
    "TextSpace",
    "ToolCall",
    "ToolCallSpace",
    "messages",
    "text",
    "to_json_schema",
    "tokens",
    "tools",
]
