"""Who a conversational episode's score is due to: the evidence a simulated user or a tool leaves.

The envs of this plugin (and the tau2 envs, which reuse its simulated users) attribute a
scored episode (``score.metadata["attribution"]``, see :mod:`rolloutgym_protocol.attribution`)
when the trajectory holds evidence against someone other than the agent:

* ``user / contradicted_scenario`` (failed episodes): a user message states an id or an
  email address that its scenario does not hold (not a fact, not a fact it gets wrong on
  purpose, not in its opening, goal or persona) and that the agent had not said first.
* ``user / ended_early`` (failed episodes): the user ended the conversation, before its turn
  limit, right after an agent message that asked it for a fact its scenario holds (its email,
  order number, ...: what the scripted user answers, see ``scripted_user.py``).
* ``user / leaked_goal`` (any episode, a pass included: the pass is not the agent's): a user
  message repeats :data:`LEAK_CHARS` or more characters of its hidden goal verbatim that its
  opening does not hold (a model-driven user pasting its instructions).
* ``env / tool_crashed`` (failed episodes): a tool raised an error of its own on arguments
  that passed its schema (a bug of the env, not a refusal such as "order not found").

Nothing here guesses: each rule is a fact a person can check in the trajectory, and the
``evidence`` says which. An episode with no such evidence stays the agent's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rolloutgym_protocol import Attribution, Score, attribute, attribution_of

from .scripted_user import fact_requests

__all__ = ["LEAK_CHARS", "attribute_episode", "user_evidence"]

LEAK_CHARS = 60
"""A user message holding this many characters of its hidden goal verbatim leaks the goal."""

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ID = re.compile(r"[\w#-]{2,40}")  # with a digit in it: an order id, a user id, a zip code


def _shape(value: str) -> str:
    """The regex of ids shaped like ``value``: letters and digits by class, the rest as is."""
    parts = []
    for run in re.findall(r"[a-z]+|[A-Z]+|\d+|[^a-zA-Z\d]", value):
        if run.isdigit():
            parts.append(rf"\d{{{len(run)}}}")
        elif run.isalpha():
            parts.append("[a-z]+" if run.islower() else "[A-Z]+")
        else:
            parts.append(re.escape(run))
    return r"(?<![\w@.])" + "".join(parts) + r"(?![\w@])"


def _values(facts: Mapping[str, Any]) -> Iterable[str]:
    for value in facts.values():
        if isinstance(value, str | int) and not isinstance(value, bool):
            yield str(value)


def _shapes(section: Any) -> list[re.Pattern[str]]:
    """Patterns of the ids and emails the scenario's facts hold (what a contradiction looks like)."""
    patterns = []
    for value in {*_values(section.facts), *_values(section.wrong_first)}:
        if _EMAIL.fullmatch(value):
            patterns.append(_EMAIL)
        elif _ID.fullmatch(value) and any(c.isdigit() for c in value) and (not value.isdigit() or len(value) >= 4):
            patterns.append(re.compile(_shape(value)))
    return patterns


def _contradiction(section: Any, turns: Sequence[tuple[str, str]]) -> str | None:
    patterns = _shapes(section)
    if not patterns:
        return None
    scenario = " ".join(
        [section.opening, section.goal, section.persona, *_values(section.facts), *_values(section.wrong_first)]
    )
    said_by_agent = ""
    for role, text in turns:
        if role != "user":
            said_by_agent += " " + text
            continue
        for pattern in patterns:
            for found in pattern.findall(text):
                if found not in scenario and found not in said_by_agent:
                    return f"the user said {found!r}, which its scenario does not hold: {text[:160]!r}"
    return None


def _leak(section: Any, turns: Sequence[tuple[str, str]]) -> str | None:
    goal = " ".join(section.goal.split())
    if len(goal) < LEAK_CHARS:
        return None
    opening = " ".join(section.opening.split())
    for role, text in turns:
        if role != "user":
            continue
        flat = " ".join(text.split())
        for start in range(0, len(goal) - LEAK_CHARS + 1, LEAK_CHARS // 4):
            window = goal[start : start + LEAK_CHARS]
            if window in flat and window not in opening:
                return f"the user repeated its hidden goal verbatim: {window!r}"
    return None


def _ended_early(section: Any, turns: Sequence[tuple[str, str]], user_ended: bool, user_turns: int) -> str | None:
    if not user_ended or user_turns > section.max_turns:
        return None
    agent = [text for role, text in turns if role != "user"]
    if not agent:
        return None
    last = agent[-1].strip()
    asked = [fact for fact in fact_requests(last, section.facts) if fact in section.facts]
    if asked:
        return f"the user ended the conversation when the agent asked for its {', '.join(asked)}: {last[-160:]!r}"
    return None


def user_evidence(
    section: Any, turns: Sequence[tuple[str, str]], *, user_ended: bool, user_turns: int
) -> tuple[Attribution | None, Attribution | None]:
    """What the conversation says against the simulated user: ``(any outcome, failed only)``.

    Args:
        section: the task's ``UserSection``.
        turns: the conversation as ``(role, text)``, roles ``"user"`` and ``"assistant"``,
            the user's opening first.
        user_ended: whether the user ended the conversation.
        user_turns: agent messages the user answered.
    """
    leak = _leak(section, turns)
    always = None if leak is None else Attribution("user", "leaked_goal", leak)
    contradiction = _contradiction(section, turns)
    if contradiction is not None:
        return always, Attribution("user", "contradicted_scenario", contradiction)
    early = _ended_early(section, turns, user_ended, user_turns)
    return always, None if early is None else Attribution("user", "ended_early", early)


def attribute_episode(
    score: Score,
    passed: bool,
    *,
    user: tuple[Attribution | None, Attribution | None] = (None, None),
    env_faults: Sequence[str] = (),
) -> Score:
    """``score`` with the attribution the evidence supports (the score's own, e.g. the grader's, first).

    Precedence on a failed episode: the grader's (already on the score), a tool crash, the
    user's failure evidence, a leaked goal. A passed episode is attributed only for a leaked goal.
    """
    if attribution_of(score) is not None:
        return score
    always, on_failure = user
    if not passed:
        if env_faults:
            return attribute(score, "env", "tool_crashed", f"{len(env_faults)} tool crash(es), first: {env_faults[0]}")
        if on_failure is not None:
            return attribute(score, on_failure.party, on_failure.reason, on_failure.evidence)
    if always is not None:
        return attribute(score, always.party, always.reason, always.evidence)
    return score
