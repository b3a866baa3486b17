"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.evals.core``, from ``rolloutgym.evals``."""

from rolloutgym.evals import (
    Benchmark,
    BenchmarkResult,
    Evaluation,
    EvaluationCallback,
    EvaluationRecord,
    run_benchmark,
    run_benchmarks,
)

__all__ = [
    "Benchmark",
    "BenchmarkResult",
    "Evaluation",
    "EvaluationCallback",
    "EvaluationRecord",
    "run_benchmark",
    "run_benchmarks",
]
