"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.graders.core``, from ``rolloutgym.graders``."""

from rolloutgym.graders import (
    Aggregator,
    CompositeGrader,
    Criterion,
    Grader,
    Rubric,
    Score,
    ScoreValue,
    all_pass,
    asymmetric_mean,
    weighted_mean,
    weighted_sum,
)

__all__ = [
    "Aggregator",
    "CompositeGrader",
    "Criterion",
    "Grader",
    "Rubric",
    "Score",
    "ScoreValue",
    "all_pass",
    "asymmetric_mean",
    "weighted_mean",
    "weighted_sum",
]
