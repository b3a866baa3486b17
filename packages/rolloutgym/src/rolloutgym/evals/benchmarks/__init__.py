"""Ready-made benchmarks (GSM8K, AIME), provided by the ``rolloutgym-benchmarks`` plugin.

The rolloutlib names, so ``from rolloutlib.evals.benchmarks import gsm8k`` ports by changing
the import to ``from rolloutgym.evals.benchmarks import gsm8k``::

    from rolloutgym.evals import run_benchmark
    from rolloutgym.evals.benchmarks import gsm8k

    benchmark = gsm8k([{"question": "What is 6 times 7?", "answer": "#### 42"}])

Raises ImportError (naming the package to install) when the plugin is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._runner import Benchmark

try:
    from rolloutgym_benchmarks import (
        AIME_PROMPT_SUFFIX,
        REGISTRY,
        AIMEEnv,
        GSM8KEnv,
        MathEnv,
        MathExample,
        aime,
        extract_aime_answer,
        extract_gsm8k_answer,
        grade_aime,
        grade_gsm8k,
        gsm8k,
        make,
        make_example_id,
    )
except ImportError as error:  # pragma: no cover - exercised only without the plugin
    if getattr(error, "name", None) not in (None, "rolloutgym_benchmarks"):
        raise
    raise ImportError(
        "rolloutgym.evals.benchmarks needs the benchmarks plugin: pip install rolloutgym-benchmarks"
    ) from error

BenchmarkFactory = Callable[..., Benchmark[Any]]
"""What :data:`REGISTRY` maps a benchmark name to: ``factory(examples=None, **options) -> Benchmark``."""

__all__ = [
    "AIME_PROMPT_SUFFIX",
    "BenchmarkFactory",
    "REGISTRY",
    "AIMEEnv",
    "GSM8KEnv",
    "MathEnv",
    "MathExample",
    "aime",
    "extract_aime_answer",
    "extract_gsm8k_answer",
    "grade_aime",
    "grade_gsm8k",
    "gsm8k",
    "make",
    "make_example_id",
]
