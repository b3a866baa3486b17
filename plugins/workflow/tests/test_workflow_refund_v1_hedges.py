"""workflow/refund-v1: a status answer must commit to one status (issue 17, class 5).

Golden fixtures (TASKS.md rule 7) for the status questions: the right status in unusual
forms passes; naming every status, two statuses, or "X or Y" scores 0 with feedback that
names the competing answers; v0 stays as published (its fingerprint is unchanged)."""

from __future__ import annotations

from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym_testing import EnvConformanceTests
from rolloutgym_workflow.refund import ORDER_STATUSES, refund_fingerprint, refund_tasks

V1 = "workflow/refund-v1"
# Changing the world, the tasks or the grading must bump the env's version (TASKS.md #9).
FINGERPRINT_V0 = "ef66a364c2155a603e6950e0f5f857fe8110fc988234ac1160a0c9758041e5d8"
FINGERPRINT_V1 = "f554d4b5e9ac87621f092e60eaf8befdb0e6638ee2894059955f764e66eafed2"
STATUS_TASKS = [item for item in refund_tasks(1) if item.metadata["family"] == "order_status"]


def _play(task_id: str, actions: list[dict[str, Any]], answer: str, env_id: str = V1) -> tuple[float, dict[str, Any]]:
    environment = get_registry().make(env_id, task=task_id)
    environment.reset(seed=0)
    for position, call in enumerate(actions):
        environment.step({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{position}", **call}]})
    _, reward, terminated, _, info = environment.step({"role": "assistant", "content": answer})
    assert terminated
    environment.close()
    return reward, info


def _status(item: Any) -> str:
    return item.metadata["answer_terms"][0]


def test_status_tasks_exist_and_list_their_competing_statuses() -> None:
    assert len(STATUS_TASKS) >= 3
    statuses = {_status(item) for item in STATUS_TASKS}
    assert len(statuses) >= 2  # the family really varies the answer
    for item in STATUS_TASKS:
        competing = item.metadata["competing_terms"]
        assert _status(item) not in competing
        assert all(
            word in competing for status, words in ORDER_STATUSES.items() if status != _status(item) for word in words
        )


@pytest.mark.parametrize("item", STATUS_TASKS, ids=lambda item: item.id)
def test_right_status_in_unusual_forms_passes(item: Any) -> None:
    status = _status(item)
    order_id = item.reference_actions[-1]["arguments"]["order_id"]
    for answer in (
        item.reference_answer,
        f"{status.upper()}: that is where order {order_id} stands right now.",
        f"Thanks for waiting! I checked {order_id}; it's currently {status} (it has not been delivered yet).",
    ):
        reward, info = _play(item.id, item.reference_actions, answer)
        assert reward == 1.0, (answer, info["score"]["feedback"])


@pytest.mark.parametrize("item", STATUS_TASKS, ids=lambda item: item.id)
def test_hedges_and_keyword_stuffing_score_zero(item: Any) -> None:
    status = _status(item)
    other = next(word for word in ("pending", "processing", "shipped") if word != status)
    every = ", ".join(ORDER_STATUSES)
    for answer in (
        f"Your order is {every}.",  # every status
        f"Your order is {status} or {other}.",  # two candidates
        f"It is either {other} or {status}, I am not sure which.",
        f"Status: {status}/{other}",
        f"It might be {status}. It might also be {other.upper()}.",
    ):
        reward, info = _play(item.id, item.reference_actions, answer)
        assert reward == 0.0, answer
        feedback = info["score"]["feedback"]
        assert "competing" in feedback and other in feedback


@pytest.mark.parametrize("item", STATUS_TASKS[:1], ids=lambda item: item.id)
def test_near_misses_and_empty_answers_score_zero(item: Any) -> None:
    status = _status(item)
    wrong = next(word for word in ("pending", "processing", "shipped") if word != status)
    for answer in (f"Your order is {wrong}.", f"Your order is not {status}.", "", "Order status retrieved."):
        reward, info = _play(item.id, item.reference_actions, answer)
        assert reward == 0.0, answer


def test_v0_keeps_its_published_grading() -> None:
    assert refund_fingerprint(0) == FINGERPRINT_V0
    assert refund_fingerprint(1) == FINGERPRINT_V1, "the refund-v1 world/tasks/grading changed: bump it to -v2"
    item = next(item for item in refund_tasks(0) if item.metadata["family"] == "order_status")
    reward, _ = _play(
        item.id, item.reference_actions, "Your order is " + ", ".join(ORDER_STATUSES), env_id="workflow/refund-v0"
    )
    assert reward == 1.0  # the published v0 hole, documented in its description; v1 closes it


class TestRefundV1Conformance(EnvConformanceTests):
    """The conformance kit on workflow/refund-v1: oracle 1.0 and null 0.0 on every task."""

    env_id = V1


def _disguised(word: str) -> dict[str, str]:
    """``word`` as a reader still reads it, written with Unicode format tricks (issue 50, class 5)."""
    middle = len(word) // 2
    return {
        "full-width": "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in word),
        "soft hyphen": word[:middle] + "\u00ad" + word[middle:],
        "zero-width space": word[:middle] + "\u200b" + word[middle:],
        "zero-width joiner": word[:middle] + "\u200d" + word[middle:],
        "word joiner": word[:middle] + "\u2060" + word[middle:],
        "byte-order mark": "\ufeff" + word,
        "bidi marks": "\u200e" + word + "\u200f",
        "mathematical bold": "".join(
            chr(0x1D41A + ord(char) - ord("a")) if "a" <= char <= "z" else char for char in word
        ),
        "circled": "".join(chr(0x24D0 + ord(char) - ord("a")) if "a" <= char <= "z" else char for char in word),
        "full-width with soft hyphens": "\u00ad".join(chr(ord(char) + 0xFEE0) for char in word),
        "Cyrillic look-alikes": word.translate(str.maketrans("aeopcxyisdh", "аеорсхуіѕԁһ")),
    }


@pytest.mark.parametrize("item", STATUS_TASKS[:2], ids=lambda item: item.id)
def test_a_competing_status_in_disguise_is_still_a_hedge(item: Any) -> None:
    status = _status(item)
    other = next(word for word in item.metadata["competing_terms"] if " " not in word)
    for trick, written in _disguised(other).items():
        if written == other:  # a word without look-alike letters
            continue
        reward, info = _play(item.id, item.reference_actions, f"Your order is {status}, or perhaps {written}.")
        assert reward == 0.0, (trick, written, info["score"]["feedback"])
    for trick, written in _disguised(status).items():  # and the right status in disguise is read as written
        reward, info = _play(item.id, item.reference_actions, f"Your order is {written}.")
        assert reward == 1.0, (trick, written, info["score"]["feedback"])
