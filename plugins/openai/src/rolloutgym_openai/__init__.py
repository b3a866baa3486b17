"""rolloutgym-openai: drive rolloutgym environments with any OpenAI-compatible chat-completions server.

``rolloutgym run toy/guess-v0 --policy openai:gpt-4o-mini`` (with ``OPENAI_API_KEY``), or
``--policy openai:Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1`` for a local server.
:mod:`rolloutgym_openai.testing` holds a scripted local server for tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from .policy import OpenAIChatPolicy, make_policy

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "policy": ["OpenAIChatPolicy", "make_policy"],
    },
)
