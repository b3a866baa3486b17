"""The progress bar's tokens column: a sign of life while a local model's first episode is still going."""

from __future__ import annotations

from typing import Any

from rich.progress import ProgressColumn
from rich.text import Text

from ..runner.activity import tokens_generated

__all__ = ["TokensColumn"]


class TokensColumn(ProgressColumn):
    """Tokens generated since the bar started, and their rate, once a local model (``hf:``) has generated any;
    empty for API and scripted policies, which do not count tokens here."""

    def __init__(self) -> None:
        super().__init__()
        self.start = tokens_generated()

    def render(self, task: Any) -> Text:
        count = tokens_generated() - self.start
        if not count:
            return Text("")
        elapsed = task.elapsed or 0.0
        rate = f" ({count / elapsed:.0f}/s)" if elapsed > 1 else ""
        return Text(f"tokens {count:,}{rate}")
