"""Graders that keyword stuffing must not beat (issue 17, class 5; TASKS.md rule 7).

Golden fixtures for ``contains_terms`` with competing answers and for ``toy/arith-v0``: a
right answer in an unusual form passes; a hedge (every candidate, two candidates, "X or
Y"), a near miss and an empty answer score 0 with feedback that names the problem."""

from __future__ import annotations

import pytest
from rolloutgym.builtin.toy import arith_tasks
from rolloutgym.declarative import Task
from rolloutgym.registry import get_registry
from rolloutgym.verifiers import VerifierContext, contains_terms

STATUSES = ["pending", "processing", "shipped", "delivered", "cancelled"]


def grade(answer: str, expected: str = "shipped", **params: object) -> tuple[float, str]:
    competing = [status for status in STATUSES if status != expected]
    grader = contains_terms(terms=[expected], competing_terms=competing, case_sensitive=False, **params)
    score = grader(VerifierContext(final_state={}, final_output=answer, tool_calls=(), task=None))
    return score.value, score.feedback or ""


@pytest.mark.parametrize(
    "answer",
    [
        "Your order is shipped.",
        "SHIPPED",
        "Good news: it shipped yesterday; it is not delivered yet.",
        "It is no longer processing: it has shipped.",
        "It isn't pending any more, it's shipped.",
        "Order O-1 has been shipped (it hasn't been delivered).",
        "Status: “shipped”.",
        "not pending but shipped",
    ],
)
def test_committed_answers_in_unusual_forms_pass(answer: str) -> None:
    value, feedback = grade(answer)
    assert value == 1.0, feedback


@pytest.mark.parametrize(
    "answer",
    [
        "Your order is pending, processing, shipped, delivered or cancelled.",
        "It is shipped or delivered.",
        "shipped/processing",
        "Either pending or shipped, I cannot tell.",
        "It was shipped. Or maybe it is still Pending.",
        "statuses: pending processing shipped delivered cancelled",
        "shipped shipped shipped delivered",
    ],
)
def test_hedges_and_stuffing_score_zero(answer: str) -> None:
    value, feedback = grade(answer)
    assert value == 0.0
    assert "competing" in feedback and "commit" in feedback


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("It is pending.", "does not give 'shipped'"),
        ("It has not shipped yet.", "negated"),
        ("It is unshipped.", "does not give"),
        ("", "does not give"),
    ],
)
def test_near_misses_and_empty_answers_score_zero(answer: str, says: str) -> None:
    value, feedback = grade(answer)
    assert value == 0.0
    assert says in feedback


def test_competing_terms_from_the_task_and_legacy_mode() -> None:
    task = Task(instruction="q", metadata={"answer_terms": ["shipped"], "others": ["pending", "delivered"]})
    grader = contains_terms(terms_from_task="answer_terms", competing_terms_from_task="others")
    hedge = VerifierContext(final_state={}, final_output="shipped or pending", tool_calls=(), task=task)
    committed = VerifierContext(final_state={}, final_output="It shipped.", tool_calls=(), task=task)
    assert grader(hedge).value == 0.0
    assert grader(committed).value == 1.0
    # Without competing terms the primitive keeps its published substring semantics.
    legacy = contains_terms(terms_from_task="answer_terms")
    assert legacy(hedge).value == 1.0
    # A required term listed among the competing ones is not held against the answer.
    assert contains_terms(terms=["shipped"], competing_terms=["shipped", "pending"])(committed).value == 1.0


def arith(answer: str, env_id: str = "toy/arith-v0", index: int = 0) -> tuple[float, str]:
    environment = get_registry().make(env_id, task=index)
    environment.reset(seed=0)
    _, reward, terminated, _, info = environment.step(answer)
    assert terminated
    return reward, info["score"]["feedback"]


def test_arith_golden_fixtures() -> None:
    item = arith_tasks()[0]
    a, _, b = item.question.removeprefix("What is ").removesuffix("?").split()
    right = str(item.answer)
    for answer in (right, f"{a} + {b} = {right}", f"The answer is **{right}**.", f"{int(right):,}"):
        reward, feedback = arith(answer)
        assert reward == 1.0, (answer, feedback)
    for answer in (
        f"{item.answer + 1} or {right}",
        f"{right} or {item.answer - 1}",
        f"{right}? maybe {item.answer + 10}, {right}",
    ):
        reward, feedback = arith(answer)
        assert reward == 0.0, answer
        assert "hedged" in feedback or "expected" in feedback
    for answer in ("", "sixty", str(item.answer + 1), "9" * 5000, "-"):
        reward, _ = arith(answer)
        assert reward == 0.0
