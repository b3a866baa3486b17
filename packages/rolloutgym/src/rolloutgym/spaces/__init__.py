"""Spaces for text, tokens, chat messages and tool calls (re-exported from the protocol)."""

from rolloutgym_protocol.spaces import *  # noqa: F403
from rolloutgym_protocol.spaces import __all__, messages, text, tokens, tools  # noqa: F401
