"""Math answer grading for GSM8K- and AIME-style benchmarks.

``grade_gsm8k(response, expected)`` and ``grade_aime(response, expected)`` return a
:class:`~rolloutgym_protocol.Score` whose value is 1.0 for a right final answer and 0.0
otherwise, with two components:

* ``correct`` -- the extracted answer equals the expected one (exact rational comparison for
  numbers: ``1/2 == 0.5 == \\frac{1}{2}``; sympy equivalence for expressions with
  ``symbolic=True``; otherwise case- and space-insensitive text);
* ``formatted`` -- the answer was found where the prompt asked for it (GSM8K: an explicit
  final-answer marker such as ``####`` or ``\\boxed{}``; AIME: ``\\boxed{}`` holding an integer
  0-999);

and metadata ``expected``, ``extracted`` (canonical spellings) and ``rule`` (which
extraction rule found the answer). The feedback says what was expected and what was found.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from rolloutgym_protocol import Score

from ._extract import DEFAULT_MAX_BOXED_ANSWERS, EXPLICIT_RULES, BoxedChoice, Extraction, extract_answer, read_value
from ._latex import normalize_latex
from ._numbers import NumberToken, format_number, read_single_number

__all__ = [
    "AIME_MAX",
    "Extraction",
    "extract_aime_answer",
    "extract_answer",
    "extract_gsm8k_answer",
    "grade_aime",
    "grade_gsm8k",
    "grade_math",
]

AIME_MAX = 999
_SPACES = re.compile(r"\s+")


def _canonical_text(extraction: Extraction) -> str | None:
    if extraction.number is not None:
        return format_number(extraction.number.value)
    return extraction.text


def extract_gsm8k_answer(
    response: str, *, boxed: BoxedChoice = "last", max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS
) -> str | None:
    """The final answer of ``response`` in a canonical spelling (``"42"``, ``"0.5"``, ``"1/3"``), or None.

    Args:
        response: the model's full answer text.
        boxed: which ``\\boxed{}`` counts when there are several: ``"last"`` (default) or ``"first"``.
        max_boxed_answers: more different boxed values than this are a hedge (None); ``None``
            turns the check off (rolloutlib's behaviour).
    """
    return _canonical_text(extract_answer(response, boxed=boxed, max_boxed_answers=max_boxed_answers))


def _aime_integer(extraction: Extraction) -> tuple[int | None, str | None]:
    """The AIME answer as an int in 0..999, or (None, why not)."""
    if extraction.number is None:
        if extraction.text is None:
            return None, extraction.problem
        return None, f"{extraction.text!r} is not a number; AIME answers are integers from 0 to {AIME_MAX}"
    value = extraction.number.value
    if extraction.number.percent or value.denominator != 1 or not 0 <= value <= AIME_MAX:
        return None, f"{format_number(value)} is not an integer from 0 to {AIME_MAX}, so it cannot be an AIME answer"
    return int(value), None


def extract_aime_answer(
    response: str, *, boxed: BoxedChoice = "last", max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS
) -> str | None:
    """The final answer as an integer string in ``0..999`` (``"\\boxed{070}"`` gives ``"70"``), else None."""
    value, _ = _aime_integer(extract_answer(response, boxed=boxed, max_boxed_answers=max_boxed_answers))
    return None if value is None else str(value)


@lru_cache(maxsize=65536)
def _expected(expected: str) -> tuple[Extraction, str | None]:
    """Read the reference answer with the same rules (``"... #### 72"`` gives 72); cached."""
    found = extract_answer(expected, max_boxed_answers=None)
    if not (found.found and found.rule in EXPLICIT_RULES):
        text = normalize_latex(expected).strip()
        token, _ = read_single_number(text)
        if token is None:
            token = read_value(text)[1]  # "seventy", "2 * 56"
        if token is not None:
            found = Extraction(format_number(token.value), token, "raw")
        else:
            found = Extraction(text or None, None, "raw", None if text else "the expected answer is empty")
    return found, _canonical_text(found)


def _expected_from(value: Any) -> tuple[Extraction, str | None]:
    if type(value) is str:
        return _expected(value)
    if isinstance(value, bool):
        raise TypeError("the expected answer must be a number or a string, not a bool")
    if isinstance(value, int | Fraction):
        number = Fraction(value)
        return Extraction(format_number(number), NumberToken(number, 0, 0), "raw"), format_number(number)
    if isinstance(value, float):
        return _expected(repr(value))
    if isinstance(value, str):
        return _expected(str(value))
    raise TypeError(f"the expected answer must be a number or a string, got {type(value).__name__}")


def _same_text(first: str, second: str) -> bool:
    def clean(text: str) -> str:
        return _SPACES.sub("", text).strip(".").casefold()

    return clean(first) == clean(second)


def _compare(found: Extraction, expected: Extraction, *, symbolic: bool) -> bool:
    mine, theirs = found.number, expected.number
    if mine is not None and theirs is not None:
        if not (mine.percent or theirs.percent):
            return mine.value == theirs.value
        return any(a == b for a in mine.alternatives for b in theirs.alternatives)
    found_text, expected_text = _canonical_text(found), _canonical_text(expected)
    if found_text is None or expected_text is None:
        return False
    if _same_text(found_text, expected_text):
        return True
    if symbolic:
        from ._symbolic import symbolically_equal

        return bool(symbolically_equal(found_text, expected_text))
    return False


@lru_cache(maxsize=1024)
def _component(value: float, feedback: str) -> Score:
    """Scores are immutable, so the few distinct format verdicts are built once."""
    return Score(value, feedback=feedback)


def _format_verdict(kind: str, found: Extraction, aime_problem: str | None, aime_integer: bool) -> tuple[bool, str]:
    if kind == "aime":
        formatted = aime_integer and found.rule == "boxed"
        if formatted:
            return True, "the answer is an integer from 0 to 999 in \\boxed{}"
        if not aime_integer:
            return False, aime_problem or "no answer found"
        return False, f"the answer was found in {found.where}, not in \\boxed{{}}"
    if found.text is None:
        return False, f"no answer found: {found.problem}"
    if found.rule in EXPLICIT_RULES:
        return True, f"the final answer is marked with {found.where}"
    return (
        False,
        f"no final-answer marker: the answer was taken from {found.where}; end with '#### <answer>' or \\boxed{{}}",
    )


def grade_math(
    response: str,
    expected: Any,
    *,
    kind: str = "gsm8k",
    boxed: BoxedChoice = "last",
    symbolic: bool = False,
    max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
) -> Score:
    """Grade one response against the expected answer.

    Args:
        response: the model's full answer text.
        expected: the reference answer: a number, or text read with the same rules
            (a GSM8K solution ending in ``#### 72`` works).
        kind: ``"gsm8k"`` (any number) or ``"aime"`` (integers 0-999, ``\\boxed{}`` expected).
        boxed: which ``\\boxed{}`` counts when there are several: ``"last"`` or ``"first"``.
        symbolic: compare non-numeric answers with sympy (``\\frac{\\sqrt3}{2} == \\sqrt{3}/2``);
            needs ``pip install 'rolloutgym-benchmarks[symbolic]'``.
        max_boxed_answers: more different ``\\boxed{}`` values than this count as hedging
            and score 0 (default 1: ``\\boxed{16} or \\boxed{18}`` scores 0, the same value boxed
            twice does not); ``None`` turns the check off, which is rolloutlib's behaviour
            (its grader takes the last box whatever came before).
    """
    if kind != "gsm8k" and kind != "aime":
        raise ValueError(f"kind must be 'gsm8k' or 'aime', got {kind!r}")
    reference, expected_text = _expected_from(expected)
    found = extract_answer(response, boxed=boxed, max_boxed_answers=max_boxed_answers)
    extracted_text = _canonical_text(found)
    if kind == "aime":
        integer, problem = _aime_integer(found)
        correct = integer is not None and _compare(found, reference, symbolic=False)
        formatted, format_feedback = _format_verdict(kind, found, problem, integer is not None)
    else:
        problem = found.problem
        correct = found.text is not None and _compare(found, reference, symbolic=symbolic)
        formatted, format_feedback = _format_verdict(kind, found, None, False)
    if correct:
        feedback = f"correct: {extracted_text} (from {found.where}) equals the expected {expected_text}"
    elif found.text is None:
        feedback = f"no answer found ({problem}); expected {expected_text}"
    elif problem:
        feedback = f"{problem}; expected {expected_text}"
    else:
        feedback = f"wrong answer: expected {expected_text}, found {extracted_text} (from {found.where})"
    value = 1.0 if correct else 0.0
    return Score(
        value,
        {
            "correct": Score(value, feedback=feedback),
            "formatted": _component(1.0 if formatted else 0.0, format_feedback),
        },
        {"expected": expected_text, "extracted": extracted_text, "rule": found.rule},
        feedback=feedback,
    )


def grade_gsm8k(
    response: str,
    expected: Any,
    *,
    boxed: BoxedChoice = "last",
    symbolic: bool = False,
    max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
) -> Score:
    """Grade a GSM8K-style answer (see :func:`grade_math`)."""
    return grade_math(
        response, expected, kind="gsm8k", boxed=boxed, symbolic=symbolic, max_boxed_answers=max_boxed_answers
    )


def grade_aime(
    response: str,
    expected: Any,
    *,
    boxed: BoxedChoice = "last",
    max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
) -> Score:
    """Grade an AIME answer: an integer 0-999, best in ``\\boxed{}`` (see :func:`grade_math`)."""
    return grade_math(response, expected, kind="aime", boxed=boxed, max_boxed_answers=max_boxed_answers)
