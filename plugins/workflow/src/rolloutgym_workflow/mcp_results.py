"""An MCP ``tools/call`` outcome as a tool message: :class:`McpToolResult` and :func:`convert_result`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.display import json_text

__all__ = ["McpToolResult", "convert_result"]


@dataclass(frozen=True)
class McpToolResult:
    """One ``tools/call`` outcome: the text the model reads, the value verifiers see, and whether it failed."""

    text: str
    value: Any
    is_error: bool


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        data = getattr(block, "data", "") or ""
        return f"[{kind} {getattr(block, 'mime_type', '?')}, {len(data) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource {getattr(block, 'uri', '')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        return text if isinstance(text, str) else f"[resource {getattr(resource, 'uri', '')}]"
    return json_text(block.model_dump(mode="json", by_alias=True, exclude_none=True))


def convert_result(result: Any) -> McpToolResult:
    """A ``CallToolResult`` as a tool message: text blocks joined (structured content as JSON when no text).

    The value verifiers see is the structured content when the server gives one, else the
    text parsed as JSON when it is JSON, else the text.
    """
    structured = getattr(result, "structured_content", None)
    parts = [_block_text(block) for block in getattr(result, "content", None) or []]
    text = "\n".join(part for part in parts if part)
    if not text and structured is not None:
        text = json_text(structured)
    value: Any = structured
    if value is None:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = text
    return McpToolResult(text, value, bool(getattr(result, "is_error", False)))
