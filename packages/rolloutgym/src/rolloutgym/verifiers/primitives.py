"""The verifier primitives, as criterion graders.

Each builder takes the primitive's parameters (everything in ``{"name", "type", "weight",
...params}`` except those three), validates them, and returns a grader called as
``grader(context, criterion=None) -> Score`` on a :class:`VerifierContext`. The Score is
1.0 (pass) or 0.0 (fail), except ``llm_judge`` (the judge's 0..1), and its feedback says
what was expected and what was found.

=====================  =========================================================================
``state_match``        ``expected: {path: value}`` all hold in the final state (paths: see ``paths``)
``contains_terms``     every term is in the final answer (or the state JSON); ``case_sensitive``;
                       ``competing_terms``: none of these other answers may be given (hedges fail);
                       the answer is read after NFKC, without format characters (soft hyphens...)
``tool_was_called``    ``tool`` was called (``arguments`` subset, ``count``/``min_count``)
``no_tool_errors``     no tool call failed
``final_answer``       the agent gave a non-empty final answer (``min_length``)
``ground_truth_match`` the task's ``hidden_ground_truth`` holds in the final state (state diff)
``llm_judge``          a judge policy grades the answer against ``rubric``
=====================  =========================================================================
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator
from rolloutgym_protocol import Score
from rolloutgym_protocol.display import json_text, safe_repr, safe_str

from ._judge import llm_judge
from ._primitive import PrimitiveGrader, _build, _Params, _passed
from .context import VerifierContext
from .diff import describe_value, state_diff
from .paths import PathError, get_path, parse_path

__all__ = [
    "PrimitiveGrader",
    "contains_terms",
    "final_answer",
    "ground_truth_match",
    "llm_judge",
    "no_tool_errors",
    "state_match",
    "tool_was_called",
]


# -- state_match ----------------------------------------------------------------------


class StateMatchParams(_Params):
    expected: dict[str, Any] = Field(min_length=1)
    tolerance: float = Field(0.0, ge=0)

    @field_validator("expected")
    @classmethod
    def _paths(cls, value: dict[str, Any]) -> dict[str, Any]:
        for path in value:
            try:
                parse_path(path)
            except PathError as exc:
                raise ValueError(str(exc)) from None
        return value


def _state_match(params: StateMatchParams, context: VerifierContext) -> Score:
    problems = []
    for path, expected in params.expected.items():
        found, actual = get_path(context.final_state, path)
        if not found and expected is not None:
            problems.append(f"{path}: missing (expected {describe_value(expected)})")
            continue
        problems += state_diff(expected, actual, path=path, tolerance=params.tolerance)
    if problems:
        return _passed(False, "; ".join(problems))
    return _passed(True, f"{len(params.expected)} state value(s) as expected")


def state_match(**params: Any) -> PrimitiveGrader:
    """``state_match``: every ``expected`` path holds (objects as subsets, numbers within ``tolerance``)."""
    return PrimitiveGrader("state_match", _build(StateMatchParams, "state_match", params), _state_match)


# -- contains_terms -------------------------------------------------------------------


class ContainsTermsParams(_Params):
    terms: list[str] = Field(default_factory=list)
    field: Literal["finalOutput", "final_output", "state"] = "finalOutput"
    case_sensitive: bool = True
    terms_from_task: str | None = None
    competing_terms: list[str] = Field(default_factory=list)
    competing_terms_from_task: str | None = None


# A mention right after a negation ("has not shipped", "isn't yet pending", "no longer
# processing", "has not been shipped") does not give that answer.
_NEGATION = re.compile(
    r"(?:\b(?:not|never|no\s+longer|yet\s+to\s+be|neither|nor|cannot|isnt|arent|wasnt|werent|hasnt|havent|hadnt"
    r"|doesnt|didnt|wont|cant)|\b\w+n['\u2019]t)"
    r"(?:\s+(?:yet|been|be|being|already|even|currently|actually|really|ever|still)){0,2}\s+[\"'\u201c(]?$",
    re.IGNORECASE,
)


# Cyrillic and Greek letters drawn like Latin ones (a reader takes "ѕhірреd" for "shipped").
# Terms and answers are folded alike, so terms written in those scripts still match.
_HOMOGLYPHS = str.maketrans(
    "аеорсхуіјѕԁһԛԝѵАВЕКМНОРСТХУІЈЅοαρνκτιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcxyijsdhqwvABEKMHOPCTXYIJSoapvktiABEZHIKMNOPTYX",
)


def _readable(text: str) -> str:
    """``text`` as a reader sees it: NFKC (full-width and compatibility letters become plain
    ones) without format characters (soft hyphens, zero-width spaces and joiners, bidi
    controls: category Cf) and with Cyrillic/Greek look-alikes of Latin letters folded, so
    "ｓｈｉｐｐｅｄ", "ship\u00adped" and "ѕhірреd" are the word "shipped"."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    return unicodedata.normalize("NFKC", text).translate(_HOMOGLYPHS)


def _task_terms(context: VerifierContext, key: str | None) -> list[str]:
    if not key:
        return []
    metadata = context.task_field("metadata") or {}
    extra = metadata.get(key, []) if isinstance(metadata, Mapping) else []
    return [safe_str(term) for term in (extra if isinstance(extra, list) else [extra])]


def _affirmed(term: str, haystack: str, case_sensitive: bool) -> bool:
    """Whether ``term`` occurs as a whole word (or phrase) that is not negated."""
    pattern = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", 0 if case_sensitive else re.IGNORECASE)
    for match in pattern.finditer(haystack):
        before = haystack[max(0, match.start() - 60) : match.start()]
        if not _NEGATION.search(before):
            return True
    return False


def _contains_terms(params: ContainsTermsParams, context: VerifierContext) -> Score:
    terms = list(params.terms) + _task_terms(context, params.terms_from_task)
    competing = list(params.competing_terms) + _task_terms(context, params.competing_terms_from_task)
    if params.field == "state":
        haystack = json_text(context.final_state, default=safe_repr)
        where = "the final state"
    else:
        haystack = _readable(context.final_output or "")  # matched as read: no format tricks either way
        terms, competing = [_readable(term) for term in terms], [_readable(term) for term in competing]
        where = "the final answer"
    if not terms:
        return _passed(True, "no terms required")
    if competing:
        return _exclusive_terms(terms, competing, haystack, where, params.case_sensitive)
    if not params.case_sensitive:
        haystack = haystack.lower()
    missing = [term for term in terms if (term if params.case_sensitive else term.lower()) not in haystack]
    if missing:
        return _passed(False, f"{where} does not mention {', '.join(map(repr, missing))}")
    return _passed(True, f"{where} mentions {', '.join(map(repr, terms))}")


def _exclusive_terms(terms: list[str], competing: list[str], haystack: str, where: str, case_sensitive: bool) -> Score:
    """Every term affirmed as a whole word, and no competing answer affirmed (a hedge scores 0)."""
    fold = (lambda text: text) if case_sensitive else str.casefold
    required = {fold(term) for term in terms}
    competing = [term for term in competing if fold(term) not in required]
    missing = [term for term in terms if not _affirmed(term, haystack, case_sensitive)]
    if missing:
        return _passed(
            False, f"{where} does not give {', '.join(map(repr, missing))} (a negated mention does not count)"
        )
    hedged = [term for term in competing if _affirmed(term, haystack, case_sensitive)]
    if hedged:
        return _passed(
            False,
            f"{where} gives {', '.join(map(repr, terms))} but also the competing answer(s) "
            f"{', '.join(map(repr, hedged))}; a hedged answer scores 0: commit to one",
            hedged=hedged,
        )
    return _passed(True, f"{where} gives {', '.join(map(repr, terms))} and no competing answer")


def contains_terms(**params: Any) -> PrimitiveGrader:
    """``contains_terms``: every term occurs in the final answer (``field="state"``: the state JSON).

    With ``competing_terms`` (the other answers of the same answer set, e.g. the other order
    statuses; ``competing_terms_from_task`` reads them from the task's metadata) the answer
    must commit: every term must occur as a whole word that is not negated ("not shipped"
    does not count), and no competing term may occur that way, so naming every candidate,
    or two of them, scores 0.
    """
    return PrimitiveGrader("contains_terms", _build(ContainsTermsParams, "contains_terms", params), _contains_terms)


# -- tool_was_called ------------------------------------------------------------------


class ToolWasCalledParams(_Params):
    tool: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None
    count: int | None = Field(None, ge=0)
    min_count: int = Field(1, ge=0)
    include_errors: bool = True


def _tool_was_called(params: ToolWasCalledParams, context: VerifierContext) -> Score:
    calls = [
        call
        for call in context.tool_calls
        if call.name == params.tool and (params.include_errors or call.error is None)
    ]
    if params.arguments is not None:
        calls = [call for call in calls if not state_diff(params.arguments, call.arguments, limit=1)]
    matched = len(calls)
    described = f"'{params.tool}'" + (
        f" with {describe_value(params.arguments)}" if params.arguments is not None else ""
    )
    if params.count is not None:
        ok = matched == params.count
        expectation = f"exactly {params.count}x"
    else:
        ok = matched >= params.min_count
        expectation = f"at least {params.min_count}x"
    return _passed(ok, f"{described} called {matched}x (expected {expectation})", calls=matched)


def tool_was_called(**params: Any) -> PrimitiveGrader:
    """``tool_was_called``: ``tool`` was called (optionally with matching ``arguments``, ``count`` times)."""
    return PrimitiveGrader("tool_was_called", _build(ToolWasCalledParams, "tool_was_called", params), _tool_was_called)


# -- no_tool_errors -------------------------------------------------------------------


class NoToolErrorsParams(_Params):
    pass


def _no_tool_errors(params: NoToolErrorsParams, context: VerifierContext) -> Score:
    failed = [call for call in context.tool_calls if call.error]
    if failed:
        shown = "; ".join(f"{call.name}: {call.error}" for call in failed[:3])
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        return _passed(False, f"{len(failed)} tool call(s) failed: {shown}{more}", errors=len(failed))
    return _passed(True, f"all {len(context.tool_calls)} tool call(s) succeeded", errors=0)


def no_tool_errors(**params: Any) -> PrimitiveGrader:
    """``no_tool_errors``: no tool call returned an error."""
    return PrimitiveGrader("no_tool_errors", _build(NoToolErrorsParams, "no_tool_errors", params), _no_tool_errors)


# -- final_answer ---------------------------------------------------------------------


class FinalAnswerParams(_Params):
    min_length: int = Field(1, ge=1)


def _final_answer(params: FinalAnswerParams, context: VerifierContext) -> Score:
    answer = (context.final_output or "").strip()
    if len(answer) >= params.min_length:
        return _passed(True, "the agent gave a final answer")
    if not answer:
        return _passed(False, "the agent gave no final answer (a message without tool calls)")
    return _passed(False, f"the final answer is {len(answer)} characters; at least {params.min_length} expected")


def final_answer(**params: Any) -> PrimitiveGrader:
    """``final_answer``: the episode ended with a non-empty final answer."""
    return PrimitiveGrader("final_answer", _build(FinalAnswerParams, "final_answer", params), _final_answer)


# -- ground_truth_match ---------------------------------------------------------------


class GroundTruthMatchParams(_Params):
    tolerance: float = Field(1e-6, ge=0)
    unordered: bool = False
    ignore: list[str] = Field(default_factory=list)


def _ground_truth_match(params: GroundTruthMatchParams, context: VerifierContext) -> Score:
    truth = context.task_field("hidden_ground_truth")
    if truth is None and isinstance(context.task, Mapping):
        truth = context.task.get("hiddenGroundTruth")
    if not isinstance(truth, Mapping) or not truth:
        return _passed(False, "the task has no hidden_ground_truth to compare the final state with")
    expected = {key: value for key, value in truth.items() if key not in params.ignore}
    differences = state_diff(expected, context.final_state, tolerance=params.tolerance, unordered=params.unordered)
    if differences:
        return Score(
            0.0,
            metadata={"differences": differences},
            feedback="final state differs from the ground truth: " + "; ".join(differences),
        )
    return _passed(True, f"final state matches the ground truth ({', '.join(map(str, expected))})")


def ground_truth_match(**params: Any) -> PrimitiveGrader:
    """``ground_truth_match``: the task's ``hidden_ground_truth`` holds in the final state."""
    return PrimitiveGrader(
        "ground_truth_match", _build(GroundTruthMatchParams, "ground_truth_match", params), _ground_truth_match
    )
