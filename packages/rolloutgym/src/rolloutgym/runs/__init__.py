"""Run files: writing, reading, resuming, summarising and exporting rollout runs; reading training logs."""

from ._store import FORMAT_VERSION, GroupLine, Run, RunWriter, iter_group_lines, iter_run, read_header, read_run
from .stats import GroupFacts, RunSummary, TaskSummary, group_facts, pass_at_k, pass_hat_k, summarize
from .training_log import TrainingLog, TrainingLogError, file_kind, read_training_log

__all__ = [
    "FORMAT_VERSION",
    "GroupFacts",
    "GroupLine",
    "Run",
    "RunSummary",
    "RunWriter",
    "TaskSummary",
    "TrainingLog",
    "TrainingLogError",
    "file_kind",
    "group_facts",
    "iter_group_lines",
    "iter_run",
    "pass_at_k",
    "pass_hat_k",
    "read_header",
    "read_run",
    "read_training_log",
    "summarize",
]
