"""ifeval/instructions-v0: the ``loose`` component honours the env's two guards, as ``strict`` does (issue 45).

IFEval's loose verdict retries a reply with its first or last line removed and asterisks
stripped; the env's guards (a reply without letters fails the language checker, a reply
holding more than one option fails the constrained-response checker) apply to the loose
verdict too, so loose never passes what strict's guards refuse; and loose passes whatever
strict passes. Real tasks, the real package.
"""

from __future__ import annotations

import pytest

pytest.importorskip("if_verifiable")

from rolloutgym_benchmarks.ifeval_envs import OPTIONS, grade, load_tasks  # noqa: E402


def _tasks(checker: str) -> list:
    return [task for task in load_tasks() if checker in task.instruction_id_list][:3]


@pytest.mark.parametrize("reply", ["1234", "1234\n5678", "**42**", "7 8 9\n\n10", "..."])
def test_a_reply_without_letters_fails_language_in_both_verdicts(reply: str) -> None:
    for task in _tasks("language:response_language"):
        score = grade(task, reply)
        assert score.components["language:response_language"].value == 0.0
        assert score.components["strict"].value == 0.0
        assert score.components["loose"].value == 0.0, (task.id, reply)


def test_a_hedge_between_options_fails_constrained_response_in_both_verdicts() -> None:
    hedges = [" ".join(OPTIONS[:2]), "\n".join(OPTIONS), f"Sure.\n{OPTIONS[0]} {OPTIONS[1]}\nThanks."]
    for task in _tasks("detectable_format:constrained_response"):
        for reply in hedges:
            score = grade(task, reply)
            assert score.components["strict"].value == 0.0
            assert score.components["loose"].value == 0.0, (task.id, reply)
            assert score.metadata["partial_loose"] < 1.0


def test_loose_passes_what_strict_passes() -> None:
    checked = 0
    for task in load_tasks()[::23][:12]:
        for reply in (task.oracle, "A plain reply."):
            score = grade(task, reply)
            if score.components["strict"].value == 1.0:
                assert score.components["loose"].value == 1.0, task.id
                checked += 1
    assert checked >= 10  # the oracles pass strict
