"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.spaces.text``, from ``rolloutgym_protocol.spaces.text``."""

from rolloutgym_protocol.spaces.text import (
    DEFAULT_ALPHABET,
    TextSpace,
    text,
)

__all__ = [
    "DEFAULT_ALPHABET",
    "TextSpace",
    "text",
]
