"""A run's options and its result: :class:`RunConfig`, :class:`RunResult`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from ..runs import RunSummary

__all__ = ["MAX_ROLLOUTS_PER_TASK", "RunConfig", "RunResult"]

# A group is held in memory until its last member ends (one run-file line): -n beyond this cannot finish.
MAX_ROLLOUTS_PER_TASK = 1_000_000


@dataclass
class RunConfig:
    """Every option of a run (recorded in the run file's header)."""

    env: str
    policy: str = "oracle"
    num_rollouts: int = 1
    limit: int | None = None
    tasks: Sequence[str | int] | None = None
    split: str | None = None
    seed: int | None = None
    concurrency: int = 8
    max_steps: int | None = None
    timeout: float | None = None
    out: str | Path | None = None
    resume: bool = False
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    policy_options: dict[str, Any] = field(default_factory=dict)
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    pass_threshold: float = 1.0
    mix: str | Mapping[str, float] | Sequence[Any] | None = None  # several envs with weights (see rolloutgym.mixtures)
    branch_at: str | int | Sequence[int] | None = None  # rollout trees: -n branches per chosen step (arollout_tree)

    def validate(self) -> None:
        if self.mix is not None and self.env:
            raise ConfigError(f"give one env ({self.env!r}) or an env mixture (mix=...), not both")
        if self.mix is None and not self.env:
            raise ConfigError("a run needs an env id, an env file, or an env mixture (--mix ENV=WEIGHT,...)")
        if self.num_rollouts < 1:
            raise ConfigError(f"-n/--num-rollouts must be at least 1, got {self.num_rollouts}")
        if self.num_rollouts > MAX_ROLLOUTS_PER_TASK:
            raise ConfigError(
                f"-n {self.num_rollouts} is more rollouts per task than a run can hold: a task's group stays in memory "
                f"until its last rollout ends and is written as one run-file line, so -n is at most "
                f"{MAX_ROLLOUTS_PER_TASK:,}; for more samples of a task, run several files with different --seed"
            )
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            # One rule with the CLI: a run of no task is a mistake, not an empty success.
            raise ConfigError(f"--limit must be at least 1 (leave it out to run every selected task), got {self.limit}")
        if self.max_steps is not None and self.max_steps < 0:
            raise ConfigError(f"--max-steps must be non-negative, got {self.max_steps}")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"--timeout must be a positive number of seconds, got {self.timeout}")
        if self.resume and self.out is None:
            raise ConfigError("--resume needs --out RUN_FILE (the run file to continue)")
        if self.branch_at is not None:
            self._validate_branching()

    def _validate_branching(self) -> None:
        from ..rollouts import branch_steps

        try:
            branch_steps(self.branch_at)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ConfigError(f"--branch-at: {exc}") from None
        if self.mix is not None or self.executor != "local":
            raise ConfigError("--branch-at runs rollout trees in this process: not with --mix or --executor ray")


@dataclass
class RunResult:
    """The finished run: its file (if any), header, groups in task order, and summary.

    ``groups`` is read back from the run file on first use (a run does not hold its groups
    in memory); a run without a file (``out=None``) holds them.
    """

    path: Path | None
    header: dict[str, Any]
    held_groups: list[TrajectoryGroup] | None
    task_indices: list[int]
    summary: RunSummary
    retried: list[int] = field(default_factory=list)  # tasks --resume re-ran: their groups held only errors

    @property
    def groups(self) -> list[TrajectoryGroup]:
        """The finished groups in task order (from the run file, read once)."""
        if self.held_groups is None:
            from ..runs import iter_run

            assert self.path is not None
            by_index = dict(iter_run(self.path, allow_partial_tail=True))
            self.held_groups = [by_index[index] for index in self.task_indices if index in by_index]
        return self.held_groups
