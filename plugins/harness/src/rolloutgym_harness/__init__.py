"""rolloutgym-harness: train and evaluate agent programs whose loop you do not own.

:class:`InterceptionEndpoint` is a local OpenAI/Anthropic-compatible model server that
records exact tokens; see ``docs/how-to/train-an-agent-harness.md``.
"""

from __future__ import annotations

from .endpoint import CallRecord, InterceptionEndpoint, Session, check_rerender
from .harness import CommandHarness, harness_trajectory

__all__ = ["CallRecord", "CommandHarness", "InterceptionEndpoint", "Session", "check_rerender", "harness_trajectory"]
