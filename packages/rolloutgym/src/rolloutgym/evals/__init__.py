"""Evaluation: run a callback over every item of a benchmark and aggregate the scores.

* :class:`Benchmark` -- a named list of items and ``make_env(item)``;
* :class:`Evaluation` -- what the callback returns for one environment;
* :func:`run_benchmark` / :func:`run_benchmarks` -- evaluate items one by one, close each
  env, record failures (``error`` + ``error_type``) instead of stopping, and aggregate into a
  :class:`BenchmarkResult` of :class:`EvaluationRecord` s.

Ready-made benchmarks are registered by plugins (hook ``rolloutgym_benchmarks``; GSM8K and
AIME come with ``rolloutgym-benchmarks``): :func:`make_benchmark` (``"gsm8k"``) and
:func:`benchmark_specs` find them through the registry, and ``run_benchmark("gsm8k", ...)``
accepts a name. :mod:`rolloutgym.evals.benchmarks` keeps rolloutlib's names.
"""

from ._registered import BenchmarkFactory, benchmark_factory, benchmark_specs, make_benchmark
from ._runner import (
    Benchmark,
    BenchmarkResult,
    Evaluation,
    EvaluationCallback,
    EvaluationRecord,
    run_benchmark,
    run_benchmarks,
)


def __getattr__(name: str) -> object:
    # ``rolloutgym.evals.benchmarks`` asks the registry: imported on first use only.
    if name == "benchmarks":
        import importlib

        return importlib.import_module(".benchmarks", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Benchmark",
    "BenchmarkFactory",
    "BenchmarkResult",
    "Evaluation",
    "EvaluationCallback",
    "EvaluationRecord",
    "benchmark_factory",
    "benchmark_specs",
    "benchmarks",
    "make_benchmark",
    "run_benchmark",
    "run_benchmarks",
]
