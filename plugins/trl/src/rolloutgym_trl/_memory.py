"""Keep a training run's memory down without changing what it computes.

* :func:`micro_batch_size`: how many episodes one forward/backward pass of a GRPO step scores.
  The step's episodes are still generated together (one generation batch, the GRPO groups
  intact); TRL splits them into ``gradient_accumulation_steps`` micro-batches and sums their
  gradients before the one optimizer step, so the activations kept for the backward pass are
  those of one micro-batch. With TRL's default token-normalised loss (``dapo``: the sum over
  the step's completion tokens divided by their count in the whole generation batch), and with
  ``grpo`` and ``dr_grpo``, the summed gradient is the one of the whole batch in one pass, up to
  the order of float additions (``tests/test_memory.py`` checks it on ``hf:tiny``).
* :func:`release_callback`: glibc keeps freed heap memory for reuse, so a process's resident
  size stays at its highest point of a step (about 0.3 GB for SmolLM2-135M). After each micro-batch and
  each step it hands the freed pages back (``malloc_trim``); a no-op where libc has no ``malloc_trim``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["DEFAULT_MICRO_BATCH", "micro_batch_size", "release_callback", "release_freed_memory"]

# Episodes per forward/backward pass when --micro-batch is not given: SmolLM2-135M keeps about
# 0.1 GB of activations per episode of 60 tokens, so 4 keeps them near 0.45 GB.
DEFAULT_MICRO_BATCH = 4


def micro_batch_size(batch: int, requested: int | None) -> int:
    """Episodes per forward/backward pass for a step of ``batch`` episodes.

    ``requested`` ``None`` or 0: the largest divisor of ``batch`` that is at most
    :data:`DEFAULT_MICRO_BATCH`. Otherwise it must divide ``batch``.

    Raises:
        ConfigError: ``requested`` is negative or does not divide ``batch``.
    """
    if not requested:
        return max(size for size in range(1, min(batch, DEFAULT_MICRO_BATCH) + 1) if batch % size == 0)
    if requested < 0 or batch % requested:
        divisors = ", ".join(str(size) for size in range(1, batch + 1) if batch % size == 0)
        raise ConfigError(
            f"--micro-batch {requested}: a step has {batch} episodes (--num-generations x --prompts-per-step), "
            f"and the micro-batch must divide it: use one of {divisors}"
        )
    return int(requested)


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Return freed heap pages to the operating system; False where libc cannot (not glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def release_callback() -> Any:
    """A ``TrainerCallback`` that calls :func:`release_freed_memory` after each micro-batch and optimizer step."""
    from transformers import TrainerCallback

    class ReleaseFreedMemory(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            release_freed_memory()

        def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            release_freed_memory()  # between the micro-batches of a step

    return ReleaseFreedMemory()
