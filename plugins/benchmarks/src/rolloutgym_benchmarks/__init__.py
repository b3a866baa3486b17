"""rolloutgym-benchmarks: GSM8K and AIME environments and their math answer grader.

* environments: :class:`MathEnv`, :class:`GSM8KEnv`, :class:`AIMEEnv` (registered as
  ``bench/gsm8k-v0`` and ``bench/aime-v0``);
* benchmarks: :func:`gsm8k`, :func:`aime`, :func:`make`, :data:`REGISTRY` (for
  ``rolloutgym.evals.run_benchmark``);
* grading: :func:`grade_gsm8k`, :func:`grade_aime`, :func:`grade_math`,
  :func:`extract_gsm8k_answer`, :func:`extract_aime_answer`, :func:`extract_answer`.

The same names are importable from ``rolloutgym.evals.benchmarks``.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy re-exports (PEP 562): `rolloutgym list` imports this package's plugin module, which
# imports this package first, so nothing heavy may be imported here.
_EXPORTS = {
    "AIMEEnv": ".envs",
    "AIME_DATASET": ".benchmarks",
    "AIME_PROMPT_SUFFIX": ".envs",
    "DatasetUnavailable": "._loading",
    "Extraction": ".grading",
    "GSM8KEnv": ".envs",
    "GSM8K_DATASET": ".benchmarks",
    "GSM8K_PROMPT_SUFFIX": ".envs",
    "MathEnv": ".envs",
    "MathExample": ".examples",
    "REGISTRY": ".benchmarks",
    "aime": ".benchmarks",
    "aime_examples": ".benchmarks",
    "aime_tasks": ".benchmarks",
    "extract_aime_answer": ".grading",
    "extract_answer": ".grading",
    "extract_gsm8k_answer": ".grading",
    "grade_aime": ".grading",
    "grade_gsm8k": ".grading",
    "grade_math": ".grading",
    "gsm8k": ".benchmarks",
    "gsm8k_examples": ".benchmarks",
    "gsm8k_tasks": ".benchmarks",
    "make": ".benchmarks",
    "make_example_id": ".examples",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
