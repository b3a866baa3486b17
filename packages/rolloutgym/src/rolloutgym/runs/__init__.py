"""Run files: writing, reading, resuming, summarising and exporting rollout runs."""

from ._store import FORMAT_VERSION, Run, RunWriter, iter_run, read_header, read_run
from .stats import RunSummary, TaskSummary, pass_at_k, pass_hat_k, summarize

__all__ = [
    "FORMAT_VERSION",
    "Run",
    "RunSummary",
    "RunWriter",
    "TaskSummary",
    "iter_run",
    "pass_at_k",
    "pass_hat_k",
    "read_header",
    "read_run",
    "summarize",
]
