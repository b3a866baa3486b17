"""rolloutgym-openai: drive rolloutgym environments with any OpenAI-compatible chat-completions server.

``rolloutgym run toy/guess-v0 --policy openai:gpt-4o-mini`` (with ``OPENAI_API_KEY``), or
``--policy openai:Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1`` for a local server.
:mod:`rolloutgym_openai.testing` holds a scripted local server for tests.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OpenAIChatPolicy", "make_policy"]


def __getattr__(name: str) -> Any:
    # Lazy: importing the package (e.g. for its plugin module) must not import httpx.
    if name in __all__:
        from . import policy

        return getattr(policy, name)
    raise AttributeError(f"module 'rolloutgym_openai' has no attribute {name!r}")
