"""rolloutgym-harness: train and evaluate agent programs whose loop you do not own.

:class:`InterceptionEndpoint` is a local OpenAI/Anthropic-compatible model server that
records exact tokens; see ``docs/how-to/train-an-agent-harness.md``.

Importing this package is cheap; each name loads its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from .endpoint import InterceptionEndpoint
    from .harness import CommandHarness, harness_trajectory
    from .lineages import LineageRow, capture_problems, harness_rows, lineage_rows, link_calls
    from .recording import CallRecord, EndpointSession, check_rerender

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "endpoint": ["InterceptionEndpoint"],
        "recording": ["CallRecord", "EndpointSession", "check_rerender"],
        "harness": ["CommandHarness", "harness_trajectory"],
        "lineages": ["LineageRow", "capture_problems", "harness_rows", "lineage_rows", "link_calls"],
    },
)
