"""Evaluation: run a callback over every item of a benchmark and aggregate the scores.

* :class:`Benchmark` -- a named list of items and ``make_env(item)``;
* :class:`Evaluation` -- what the callback returns for one environment;
* :func:`run_benchmark` / :func:`run_benchmarks` -- evaluate items one by one, close each
  env, record failures (``error`` + ``error_type``) instead of stopping, and aggregate into a
  :class:`BenchmarkResult` of :class:`EvaluationRecord` s.

Ready-made benchmarks live in :mod:`rolloutgym.evals.benchmarks`.
"""

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
    # ``rolloutgym.evals.benchmarks`` needs the benchmarks plugin: imported on first use only.
    if name == "benchmarks":
        import importlib

        return importlib.import_module(".benchmarks", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Benchmark",
    "BenchmarkResult",
    "Evaluation",
    "EvaluationCallback",
    "EvaluationRecord",
    "benchmarks",
    "run_benchmark",
    "run_benchmarks",
]
