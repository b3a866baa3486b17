"""The ``llm_judge`` primitive: a judge policy scores the final answer against a rubric (0..1).

Unlike the deterministic primitives (:mod:`rolloutgym.verifiers.primitives`, which lists it
with them and is its entry point) it needs ``context.judge``: a policy it prompts and whose
reply it parses for a score.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field
from rolloutgym_protocol import Score, attribute
from rolloutgym_protocol.display import json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import ConfigError

from ._primitive import PrimitiveGrader, _build, _Params
from .context import VerifierContext

__all__ = ["llm_judge"]


class LLMJudgeParams(_Params):
    rubric: str = Field(min_length=1)
    threshold: float = Field(0.5, ge=0, le=1)
    include_state: bool = False


_JUDGE_SYSTEM = (
    "You are a strict grader. Read the task, the agent's final answer and the rubric, then reply "
    'with one JSON object: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.'
)
_SCORE = re.compile(r"\"?score\"?\s*[:=]\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def _render(params: LLMJudgeParams, context: VerifierContext) -> Any:
    parts = [
        f"Task:\n{context.task_field('instruction', '')}",
        f"Agent's final answer:\n{context.final_output or '(none)'}",
    ]
    if params.include_state:
        parts.append(f"Final state:\n{json_text(context.final_state, default=safe_repr)[:8000]}")
    parts.append(f"Rubric:\n{params.rubric}")
    return [{"role": "system", "content": _JUDGE_SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _parse(text: str, params: LLMJudgeParams) -> Score:
    match = _SCORE.search(text)
    if match is None:
        # Undecided, not failed: the 0 is the grader's (rolloutgym_protocol.attribution).
        unreadable = Score(0.0, feedback=f"the judge's reply has no score: {text[:200]!r}")
        return attribute(unreadable, "grader", "judge_unparseable", f"judge reply: {text[:200]!r}")
    value = min(1.0, max(0.0, float(match.group(1))))
    reason = re.search(r"\"reason\"\s*:\s*\"([^\"]*)\"", text)
    because = reason.group(1) if reason else text[:200]
    verdict = "pass" if value >= params.threshold else "fail"
    return Score(
        value,
        metadata={"threshold": params.threshold},
        feedback=f"judge: {value:g} ({verdict}, threshold {params.threshold:g}): {because}",
    )


class _JudgeGrader(PrimitiveGrader):
    requires_judge = True

    def __call__(self, context: VerifierContext, criterion: Any = None) -> Score:
        from ..graders import LLMGrader

        params: LLMJudgeParams = self.params  # type: ignore[assignment]
        if context.judge is None:
            raise ConfigError(
                "the llm_judge primitive needs a judge policy: pass --env-arg judge=PROVIDER:MODEL "
                "(e.g. judge=openai:gpt-4o-mini) or judge=<policy> to the env factory"
            )
        grader = LLMGrader(
            sample=lambda chat: _sample(context.judge, chat),
            render=lambda input, rubric: _render(params, input),
            parse=lambda text, rubric: _parse(text, params),
        )
        return grader.score(context, params.rubric)


def _sample(judge: Any, chat: Any) -> str:
    from ._sync import call_policy

    action = call_policy(judge, chat)
    if isinstance(action, Mapping):
        content = action.get("content")
        return content if isinstance(content, str) else json_text(content)
    return safe_str(action)


def llm_judge(**params: Any) -> PrimitiveGrader:
    """``llm_judge``: a judge policy scores the final answer against ``rubric`` (0..1; passes at ``threshold``)."""
    return _JudgeGrader("llm_judge", _build(LLMJudgeParams, "llm_judge", params), lambda params, context: Score(0.0))
