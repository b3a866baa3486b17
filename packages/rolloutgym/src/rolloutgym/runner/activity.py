"""Signs of life for progress displays: tokens generated in this process.

A policy that generates tokens locally (``hf:`` on a CPU may take minutes per episode) counts
each decoded token with :func:`count_tokens`; ``rolloutgym run``'s progress bar shows the
count and the rate, so a run whose first episode is still going visibly moves. Counting is
an integer increment under a lock: nothing for a decode step that takes milliseconds.
"""

from __future__ import annotations

import threading

__all__ = ["count_tokens", "tokens_generated"]

_lock = threading.Lock()
_count = 0


def count_tokens(number: int = 1) -> None:
    """Add ``number`` generated tokens to this process's count (any thread)."""
    global _count
    with _lock:
        _count += number


def tokens_generated() -> int:
    """Tokens generated in this process so far, by the policies that count them."""
    return _count
