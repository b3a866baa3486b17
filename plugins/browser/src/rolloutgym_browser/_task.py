"""What a browser task asks (:class:`BrowserTask`), what an episode leaves for its grader
(:class:`EpisodeOutcome`), and the built-in grader over them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import Score
from rolloutgym_protocol.errors import ConfigError

from .grading import grade_episode

__all__ = ["BrowserTask", "EpisodeOutcome", "grade_with_ground_truth"]


@dataclass(frozen=True)
class BrowserTask:
    """One browser task.

    Attributes:
        id: unique within its environment.
        split: ``train``, ``dev`` or ``test``.
        instruction: what the agent is asked to do.
        start_url: the site-relative page the episode opens.
        setup: initial server-side state for this task (site specific, e.g. a cart).
        expected_state: the whole expected end state (None: not compared).
        expected_paths: ``{dotted.path: value}`` that must hold in the end state.
        expected_url: the page the agent must end on.
        answer: the expected final answer (a value or a list of accepted values).
        oracle: the reference solution, tool calls ``{"name", "arguments"}`` played one per
            step, then a final "Done." (None: the task has no reference solution).
        skills: what the task exercises (``form-filling``, ``navigation``, ``lookup``...).
    """

    id: str
    split: str
    instruction: str
    start_url: str = "/"
    setup: Mapping[str, Any] = field(default_factory=dict)
    expected_state: Mapping[str, Any] | None = None
    expected_paths: Mapping[str, Any] | None = None
    expected_url: str | None = None
    answer: Any = None
    oracle: tuple[Mapping[str, Any], ...] | None = ()
    skills: tuple[str, ...] = ()

    @property
    def has_ground_truth(self) -> bool:
        """Whether the built-in grader has something to check."""
        return (
            self.expected_state is not None
            or bool(self.expected_paths)
            or self.expected_url is not None
            or self.answer is not None
        )


@dataclass(frozen=True)
class EpisodeOutcome:
    """What a grader sees at the end of an episode.

    Attributes:
        state: the site's server-side state.
        answer: the agent's final answer ("" when it gave none).
        final_url: the page the agent ended on.
        tool_calls: ``{"name", "arguments", "result", "error"}`` for every tool call, refused ones included.
        invalid_actions: refused tool calls.
        page_errors: ``"404 GET /nope"`` for pages the site could not serve.
        blocked_requests: requests to other sites that were refused.
    """

    state: Mapping[str, Any]
    answer: str
    final_url: str
    tool_calls: tuple[Mapping[str, Any], ...]
    invalid_actions: int
    page_errors: tuple[str, ...]
    blocked_requests: tuple[str, ...]


def grade_with_ground_truth(task: BrowserTask, outcome: EpisodeOutcome) -> Score:
    """The built-in grader: state, answer and ``no_errors`` (see :mod:`rolloutgym_browser.grading`)."""
    if not task.has_ground_truth:
        raise ConfigError(
            f"browser task {task.id!r} has nothing to grade: give it an expected end state, expected paths, "
            "an expected URL or an answer"
        )
    return grade_episode(
        state=outcome.state,
        answer=outcome.answer,
        expected_state=task.expected_state,
        expected_paths=task.expected_paths,
        expected_answer=task.answer,
        expected_url=task.expected_url,
        final_url=outcome.final_url,
        invalid_actions=outcome.invalid_actions,
        page_errors=outcome.page_errors,
        blocked_requests=outcome.blocked_requests,
    )
