"""Who a tau2 episode's score is due to: the workflow plugin's user evidence on tau2's conversation.

tau2's user simulator errs (tau2-bench PR #392 found user-simulator errors in up to 30% of failed
retail trajectories). The tau2 envs play its scenarios with the workflow plugin's simulated users
and attribute each score with the same rules (:mod:`rolloutgym_workflow.attribution`): a failed
episode where the user stated an id or email its scenario does not hold, or ended the conversation
when the agent asked it for a fact its scenario holds, is the user's; a user that repeated its
hidden instructions verbatim makes any outcome the user's (the pass is not the agent's).
"""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import Score

__all__ = ["attribute_tau2"]


def _turns(trajectory: list[Any]) -> list[tuple[str, str]]:
    """tau2's messages as ``(role, text)`` turns between the user and the agent (tool traffic left out)."""
    turns = []
    for message in trajectory:
        role, content = getattr(message, "role", None), getattr(message, "content", None)
        if role in ("user", "assistant") and isinstance(content, str) and content.strip():
            turns.append((role, content))
    return turns


def attribute_tau2(score: Score, section: Any, trajectory: list[Any], *, termination: str, user: Any) -> Score:
    """``score`` with the attribution the conversation supports (unchanged when it supports none)."""
    from rolloutgym_workflow.attribution import attribute_episode, user_evidence

    turns = getattr(user, "turns", 0)
    evidence = user_evidence(section, _turns(trajectory), user_ended=termination == "user_stop", user_turns=turns)
    return attribute_episode(score, score.value >= 1.0, user=evidence)
