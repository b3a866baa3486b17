"""Run files: writing, reading, resuming, summarising and exporting rollout runs; reading training logs."""

from ._store import (
    FORMAT_VERSION,
    FactsLine,
    GroupLine,
    Run,
    StreamedRun,
    iter_group_facts,
    iter_group_lines,
    iter_run,
    read_header,
    read_run,
    summarize_run,
)
from ._writer import RunWriter
from .stats import (
    GroupFacts,
    RunSummary,
    SummaryBuilder,
    TaskSummary,
    group_facts,
    line_facts,
    pass_at_k,
    pass_hat_k,
    summarize,
)
from .training_log import TrainingLog, TrainingLogError, file_kind, read_training_log

__all__ = [
    "FORMAT_VERSION",
    "FactsLine",
    "GroupFacts",
    "GroupLine",
    "Run",
    "RunSummary",
    "RunWriter",
    "StreamedRun",
    "SummaryBuilder",
    "TaskSummary",
    "TrainingLog",
    "TrainingLogError",
    "file_kind",
    "group_facts",
    "iter_group_facts",
    "iter_group_lines",
    "iter_run",
    "line_facts",
    "pass_at_k",
    "pass_hat_k",
    "read_header",
    "read_run",
    "read_training_log",
    "summarize",
    "summarize_run",
]
