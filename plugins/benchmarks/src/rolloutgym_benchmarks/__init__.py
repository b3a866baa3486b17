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

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._loading import DatasetUnavailable
    from .benchmarks import (
        AIME_DATASET,
        GSM8K_DATASET,
        REGISTRY,
        aime,
        aime_examples,
        aime_tasks,
        gsm8k,
        gsm8k_examples,
        gsm8k_tasks,
        make,
    )
    from .envs import AIME_PROMPT_SUFFIX, GSM8K_PROMPT_SUFFIX, AIMEEnv, GSM8KEnv, MathEnv
    from .examples import MathExample, make_example_id
    from .grading import (
        Extraction,
        extract_aime_answer,
        extract_answer,
        extract_gsm8k_answer,
        grade_aime,
        grade_gsm8k,
        grade_math,
    )

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_loading": ["DatasetUnavailable"],
        "benchmarks": [
            "AIME_DATASET",
            "GSM8K_DATASET",
            "REGISTRY",
            "aime",
            "aime_examples",
            "aime_tasks",
            "gsm8k",
            "gsm8k_examples",
            "gsm8k_tasks",
            "make",
        ],
        "envs": ["AIMEEnv", "AIME_PROMPT_SUFFIX", "GSM8KEnv", "GSM8K_PROMPT_SUFFIX", "MathEnv"],
        "examples": ["MathExample", "make_example_id"],
        "grading": [
            "Extraction",
            "extract_aime_answer",
            "extract_answer",
            "extract_gsm8k_answer",
            "grade_aime",
            "grade_gsm8k",
            "grade_math",
        ],
    },
)
