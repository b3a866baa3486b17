"""Chat message and tool-call value types (TypedDicts that work on Python 3.11)."""

from rolloutgym_protocol.types import *  # noqa: F403
from rolloutgym_protocol.types import __all__  # noqa: F401
