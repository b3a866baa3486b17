"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.spaces.messages``.

They come from ``rolloutgym_protocol.spaces.messages``.
"""

from rolloutgym_protocol.spaces.messages import (
    DEFAULT_ROLES,
    ChatSpace,
    MessageSpace,
    chat,
    message,
)

__all__ = [
    "ChatSpace",
    "DEFAULT_ROLES",
    "MessageSpace",
    "chat",
    "message",
]
