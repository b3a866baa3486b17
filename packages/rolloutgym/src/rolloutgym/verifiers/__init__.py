"""Verifier primitives as criterion graders, and the :class:`Verifier` that weighs them.

Every template (workflow, sql, code, browser) grades with these: build a
:class:`VerifierContext` (final state, final answer, tool calls, task) at the end of an
episode and call ``build_verifier(config).score(context)``.
"""

from ._sync import call_policy
from .context import ToolCallRecord, VerifierContext
from .diff import describe_value, state_diff, values_match
from .paths import APPEND, LENGTH, PathError, format_path, get_path, parse_path, set_path
from .primitives import (
    PrimitiveGrader,
    contains_terms,
    final_answer,
    ground_truth_match,
    llm_judge,
    no_tool_errors,
    state_match,
    tool_was_called,
)
from .verifier import DEFAULT_VERIFIER, Verifier, VerifierCheck, build_verifier, validate_verifier

__all__ = [
    "APPEND",
    "DEFAULT_VERIFIER",
    "LENGTH",
    "PathError",
    "PrimitiveGrader",
    "ToolCallRecord",
    "Verifier",
    "VerifierCheck",
    "VerifierContext",
    "build_verifier",
    "call_policy",
    "contains_terms",
    "describe_value",
    "final_answer",
    "format_path",
    "get_path",
    "ground_truth_match",
    "llm_judge",
    "no_tool_errors",
    "parse_path",
    "set_path",
    "state_diff",
    "state_match",
    "tool_was_called",
    "validate_verifier",
    "values_match",
]
