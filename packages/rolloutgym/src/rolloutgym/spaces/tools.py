"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.spaces.tools``.

They come from ``rolloutgym_protocol.spaces.tools``.
"""

from rolloutgym_protocol.spaces.tools import (
    ToolCallSpace,
    call,
    calls,
)

__all__ = [
    "ToolCallSpace",
    "call",
    "calls",
]
