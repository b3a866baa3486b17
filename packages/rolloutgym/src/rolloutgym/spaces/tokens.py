"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.spaces.tokens``.

They come from ``rolloutgym_protocol.spaces.tokens``.
"""

from rolloutgym_protocol.spaces.tokens import (
    id,
    sequence,
)

__all__ = [
    "id",
    "sequence",
]
