"""rolloutlib's ``evals.benchmarks`` names, resolved through the registry (hook ``rolloutgym_benchmarks``).

``from rolloutlib.evals.benchmarks import gsm8k`` ports by changing the import to
``from rolloutgym.evals.benchmarks import gsm8k``::

    from rolloutgym.evals import run_benchmark
    from rolloutgym.evals.benchmarks import gsm8k

    benchmark = gsm8k([{"question": "What is 6 times 7?", "answer": "#### 42"}])

The core knows no benchmark package: ``gsm8k``, ``aime`` (and any other registered name) are
the factories that installed plugins register; :data:`REGISTRY` and :func:`make` look them up
in the registry. rolloutlib's helper names (``MathEnv``, ``grade_gsm8k``, ``AIME_PROMPT_SUFFIX``,
...) are read from the package that registers the benchmark they belong to; new code imports
them from that package (``rolloutgym_benchmarks``) and uses :func:`rolloutgym.evals.make_benchmark`.

A name no installed plugin provides raises ``ImportError`` saying what to install
(``pip install ./plugins/benchmarks`` from a checkout).
"""

from __future__ import annotations

import importlib
from typing import Any

from .._registered import BenchmarkFactory, benchmark_factory, benchmark_specs, make_benchmark, missing_benchmarks_hint
from .._runner import Benchmark

# rolloutlib's helper names, by the benchmark whose plugin package provides them.
_HELPERS = {
    "AIMEEnv": "aime",
    "AIME_PROMPT_SUFFIX": "aime",
    "GSM8KEnv": "gsm8k",
    "MathEnv": "gsm8k",
    "MathExample": "gsm8k",
    "extract_aime_answer": "aime",
    "extract_gsm8k_answer": "gsm8k",
    "grade_aime": "aime",
    "grade_gsm8k": "gsm8k",
    "make_example_id": "gsm8k",
}
_BENCHMARKS = ("aime", "gsm8k")

__all__ = [  # noqa: F822 - the names other than BenchmarkFactory and make are resolved by __getattr__
    "AIMEEnv",
    "AIME_PROMPT_SUFFIX",
    "BenchmarkFactory",
    "GSM8KEnv",
    "MathEnv",
    "MathExample",
    "REGISTRY",
    "aime",
    "extract_aime_answer",
    "extract_gsm8k_answer",
    "grade_aime",
    "grade_gsm8k",
    "gsm8k",
    "make",
    "make_example_id",
]


def make(name: str, examples: Any = None, **options: Any) -> Benchmark[Any]:
    """``make("gsm8k")`` / ``make("aime", path=...)``: a registered benchmark by name.

    Raises:
        ValueError: ``unknown benchmark 'x'; choose from [...]``.
    """
    return make_benchmark(name, examples, **options)


def _missing(name: str) -> ImportError:
    return ImportError(
        f"rolloutgym.evals.benchmarks.{name}: no installed plugin provides it. {missing_benchmarks_hint()}"
    )


def _helper(name: str) -> Any:
    spec = benchmark_specs().get(_HELPERS[name])
    if spec is None:
        raise _missing(name)
    package = importlib.import_module(spec.entry_point.partition(":")[0].split(".")[0])
    try:
        return getattr(package, name)
    except AttributeError:
        raise AttributeError(
            f"rolloutgym.evals.benchmarks.{name}: {package.__name__}, which registers the "
            f"{spec.name!r} benchmark, has no {name!r}"
        ) from None


def __getattr__(name: str) -> Any:
    if name == "REGISTRY":
        # rolloutlib's {name: factory}; built from the registry on each access.
        return {benchmark: benchmark_factory(benchmark) for benchmark in sorted(benchmark_specs())}
    if name in _HELPERS:
        return _helper(name)
    if name.startswith("__"):
        raise AttributeError(name)
    if name in benchmark_specs():
        return benchmark_factory(name)
    if name in _BENCHMARKS:
        raise _missing(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *benchmark_specs()})
