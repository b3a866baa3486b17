"""Graders: turn an episode's outcome into a :class:`Score`.

* contracts (from ``rolloutgym_protocol``): :class:`Score`, :class:`Criterion`,
  :class:`Rubric`, :class:`Grader`;
* aggregations: :func:`weighted_sum`, :func:`weighted_mean`, :func:`all_pass`,
  :func:`asymmetric_mean`;
* :class:`CompositeGrader` (one grader per criterion, then an aggregation),
  :class:`LLMGrader` (a model as judge);
* :class:`GradingWrapper` / :class:`AsyncGradingWrapper`: grade inside ``step`` and reward the score.
"""

from rolloutgym_protocol import Criterion, Grader, Rubric, Score, ScoreValue

from .aggregations import Aggregator, all_pass, asymmetric_mean, weighted_mean, weighted_sum
from .composite import CompositeGrader
from .llm import LLMGrader
from .wrappers import AsyncGradingWrapper, GradingWrapper

__all__ = [
    "Aggregator",
    "AsyncGradingWrapper",
    "CompositeGrader",
    "Criterion",
    "Grader",
    "GradingWrapper",
    "LLMGrader",
    "Rubric",
    "Score",
    "ScoreValue",
    "all_pass",
    "asymmetric_mean",
    "weighted_mean",
    "weighted_sum",
]
