"""Extraction rules, options and the score's shape, beyond the golden table."""

from __future__ import annotations

import pytest
from rolloutgym_benchmarks import (
    extract_aime_answer,
    extract_answer,
    extract_gsm8k_answer,
    grade_aime,
    grade_gsm8k,
    grade_math,
)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (r"\boxed{\frac{1}{2}}", "0.5"),
        (r"\boxed{\frac{1}{3}}", "1/3"),
        ("1e3", "1000"),
        (r"\boxed{3\,000}", "3000"),
        (r"\boxed{3{,}000}", "3000"),
        ("#### 1,234", "1234"),
        ("The answer is -12.", "-12"),
        ("", None),
        ("no digits here", None),
        (r"\boxed{2\pi}", r"2\pi"),
    ],
)
def test_extract_gsm8k_answer(response: str, expected: str | None) -> None:
    assert extract_gsm8k_answer(response) == expected


def test_boxed_first_or_last() -> None:
    response = r"first \boxed{1}, then \boxed{2}"
    # Two different boxed values are a hedge by default ...
    assert extract_gsm8k_answer(response) is None
    assert grade_gsm8k(response, "2").value == 0.0
    assert "different \\boxed{} answers" in grade_gsm8k(response, "2").feedback
    # ... and max_boxed_answers=None is rolloutlib's behaviour: pick one by position.
    assert extract_gsm8k_answer(response, max_boxed_answers=None) == "2"
    assert extract_gsm8k_answer(response, boxed="first", max_boxed_answers=None) == "1"
    assert grade_gsm8k(response, "1", boxed="first", max_boxed_answers=None).value == 1.0
    with pytest.raises(ValueError, match="'first' or 'last'"):
        extract_answer(response, boxed="middle")  # type: ignore[arg-type]


def test_rule_precedence() -> None:
    assert extract_answer("**5**\n#### 6").rule == "####"
    assert extract_answer("#### 6 and \\boxed{7}").rule == "boxed"
    assert extract_answer("The answer is 8. Then 9").number.value == 8
    assert extract_answer("bold **10** then 11").rule == "bold"
    assert extract_answer("just 12 and 13").number.value == 13


def test_aime_range_is_enforced() -> None:
    assert extract_aime_answer(r"\boxed{070}") == "70"
    assert extract_aime_answer(r"\boxed{1000}") is None
    assert extract_aime_answer(r"\boxed{-1}") is None
    assert extract_aime_answer(r"\boxed{2.5}") is None
    score = grade_aime(r"\boxed{1070}", "70")
    assert score.value == 0.0
    assert "0 to 999" in score.components["formatted"].feedback


def test_formatted_component() -> None:
    assert grade_gsm8k("#### 5", "5").component_values == {"correct": 1.0, "formatted": 1.0}
    unmarked = grade_gsm8k("it is 5", "5")
    assert unmarked.component_values == {"correct": 1.0, "formatted": 0.0}
    assert "####" in unmarked.components["formatted"].feedback
    aime_unboxed = grade_aime("It is 5.", "5")
    assert aime_unboxed.component_values == {"correct": 1.0, "formatted": 0.0}


def test_metadata_has_extracted_and_expected() -> None:
    score = grade_gsm8k(r"\boxed{\dfrac{6}{4}}", "Half of 3 is <<3/2=1.5>>1.5\n#### 1.5")
    assert score.value == 1.0
    assert score.metadata == {"expected": "1.5", "extracted": "1.5", "rule": "boxed"}


def test_wrong_answer_feedback_names_both_values() -> None:
    score = grade_gsm8k("#### 41", "#### 42")
    assert score.value == 0.0
    assert "expected 42" in score.feedback and "41" in score.feedback


def test_expected_as_number() -> None:
    assert grade_gsm8k("#### 42", 42).value == 1.0
    assert grade_gsm8k("#### 0.5", 0.5).value == 1.0
    with pytest.raises(TypeError, match="number or a string"):
        grade_gsm8k("#### 1", True)
    with pytest.raises(ValueError, match="kind"):
        grade_math("1", "1", kind="mmlu")


def test_non_text_response_is_not_a_crash() -> None:
    score = grade_gsm8k(None, "1")  # type: ignore[arg-type]
    assert score.value == 0.0 and "not text" in score.feedback


def test_symbolic_needs_asking() -> None:
    assert grade_gsm8k(r"\boxed{\frac{\sqrt{3}}{2}}", r"\frac{1}{2}\sqrt{3}").value == 0.0
    assert grade_gsm8k(r"\boxed{\frac{\sqrt{3}}{2}}", r"\frac{1}{2}\sqrt{3}", symbolic=True).value == 1.0


def test_hedging_limit_is_configurable() -> None:
    response = r"\boxed{1} \boxed{2} \boxed{3} \boxed{4}"
    assert grade_math(response, "4").value == 0.0
    assert grade_math(response, "4", max_boxed_answers=None).value == 1.0
