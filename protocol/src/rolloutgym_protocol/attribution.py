"""Scored-failure attribution: who the evidence of an episode's score points at.

A 0 on a finished episode is usually read as the agent's failure. Often it is not: the
simulated user contradicted its scenario or quit before the agent could act, a tool failed
for reasons of its own, or the grader could not decide. An env that can tell says so on the
episode's :class:`~rolloutgym_protocol.Score`, in ``score.metadata["attribution"]``::

    {"party": "user", "reason": "contradicted_scenario", "evidence": "said order #W9999; the scenario holds #W1234"}

* ``party``: one of :data:`PARTIES` — ``agent`` (the policy under training), ``user`` (the
  simulated user), ``env`` (a tool or the world failed on its own, a timeout), ``grader``
  (the verifier or judge could not decide).
* ``reason``: a short snake_case tag (``ended_early``, ``tool_crashed``, ``judge_failed``, ...).
* ``evidence``: words a person can check against the trajectory (optional).

The key is optional and additive: a score without it is the agent's, as before, and readers
that do not know it ignore it. Run-file readers validate it (a ``party`` outside
:data:`PARTIES` is a corrupt line); ``show``, ``report`` and ``compare`` count failures per
party; trainers can leave non-agent episodes out of training (their reward says nothing
about the policy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .scores import Score

__all__ = [
    "ATTRIBUTION_KEY",
    "NON_AGENT_PARTIES",
    "PARTIES",
    "Attribution",
    "attribute",
    "attribution_of",
    "party_of",
]

ATTRIBUTION_KEY = "attribution"
"""The key of ``Score.metadata`` that holds an episode's attribution."""

PARTIES = ("agent", "user", "env", "grader")
"""Who a score's evidence can point at."""

NON_AGENT_PARTIES = frozenset({"user", "env", "grader"})
"""Parties whose failures say nothing about the policy (what trainers mask by default)."""


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who a scored episode's outcome is due to, why, and the evidence (see the module docstring)."""

    party: str
    reason: str
    evidence: str | None = None

    def __post_init__(self) -> None:
        if self.party not in PARTIES:
            raise ValueError(f"attribution party must be one of {', '.join(PARTIES)}; got {self.party!r}")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("attribution reason must be a non-empty string (e.g. 'ended_early')")
        if self.evidence is not None and not isinstance(self.evidence, str):
            raise ValueError("attribution evidence must be a string or None")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"party": self.party, "reason": self.reason}
        if self.evidence is not None:
            data["evidence"] = self.evidence
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Attribution:
        """Read ``{"party", "reason", "evidence"?}``; ``ValueError`` naming the problem otherwise."""
        if not isinstance(data, Mapping):
            raise ValueError("attribution must be an object {'party': ..., 'reason': ...}")
        return cls(data.get("party"), data.get("reason"), data.get("evidence"))  # type: ignore[arg-type]


def attribute(score: Score, party: str, reason: str, evidence: str | None = None) -> Score:
    """``score`` with ``metadata["attribution"]`` set (a new Score; the value is unchanged)."""
    record = Attribution(party, reason, evidence)
    metadata = {**score.metadata, ATTRIBUTION_KEY: record.to_dict()}
    return Score(score.value, score.components, metadata, feedback=score.feedback)


def attribution_of(score: Score | Mapping[str, Any] | None) -> Attribution | None:
    """The attribution a Score (or its ``to_dict()``) carries; ``None`` when it carries none."""
    if score is None:
        return None
    metadata = score.metadata if isinstance(score, Score) else score.get("metadata")
    raw = metadata.get(ATTRIBUTION_KEY) if isinstance(metadata, Mapping) else None
    return None if raw is None else Attribution.from_dict(raw)


def party_of(score: Score | Mapping[str, Any] | None) -> str:
    """The party a score's failure is due to: its attribution's, else ``"agent"``."""
    found = attribution_of(score)
    return "agent" if found is None else found.party
