"""workflow/refund-v2: a refusal whose right end state is the untouched world rests on its lookup (issue 32).

Under v1 the two unknown-email tasks passed any reply with no tool call (their right end state
is the initial one and they require no answer terms), so ``--policy random`` scored 3.6-3.8%.
Golden fixtures (TASKS.md rule 7): the lookup and a refusal passes; a refusal without the
lookup, a lookup of another email, and the seeded random policy score 0; v1 keeps its grading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.registry import get_registry
from rolloutgym_testing import EnvConformanceTests
from rolloutgym_workflow.refund import refund_fingerprint, refund_tasks

V2 = "workflow/refund-v2"
FINGERPRINT_V1 = "f554d4b5e9ac87621f092e60eaf8befdb0e6638ee2894059955f764e66eafed2"
NOTHING_TO_DO = [item for item in refund_tasks(2) if "required_calls" in item.metadata]


def _play(task_id: str, actions: list[dict[str, Any]], answer: str, env_id: str = V2) -> tuple[float, str]:
    environment = get_registry().make(env_id, task=task_id)
    environment.reset(seed=0)
    for position, call in enumerate(actions):
        environment.step({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{position}", **call}]})
    _, reward, terminated, _, info = environment.step({"role": "assistant", "content": answer})
    assert terminated
    environment.close()
    return reward, info["score"]["feedback"]


def test_only_the_unknown_email_refusals_require_their_lookup() -> None:
    assert sorted(item.id for item in NOTHING_TO_DO) == ["refuse_unknown_email-1", "refuse_unknown_email-2"]
    for item in NOTHING_TO_DO:
        assert item.metadata["required_calls"] == item.reference_actions
        assert item.reference_actions[0]["name"] == "find_customer_by_email"


@pytest.mark.parametrize("item", NOTHING_TO_DO, ids=lambda item: item.id)
def test_a_refusal_passes_only_after_looking_the_email_up(item: Any) -> None:
    lookup = item.reference_actions
    assert _play(item.id, lookup, item.reference_answer)[0] == 1.0
    assert _play(item.id, lookup, "No account uses that address, so I can't touch any order.")[0] == 1.0
    reward, feedback = _play(item.id, [], item.reference_answer)  # the right words, but a guess
    assert reward == 0.0 and "never made" in feedback and "find_customer_by_email" in feedback
    other = [{"name": "find_customer_by_email", "arguments": {"email": "someone.else@example.com"}}]
    assert _play(item.id, other, item.reference_answer)[0] == 0.0
    assert _play(item.id, [], "KPi8l7r7yKZTdiTIG64Lg5SpNc50")[0] == 0.0  # what --policy random replies
    assert _play(item.id, [], item.reference_answer, env_id="workflow/refund-v1")[0] == 1.0  # the v1 hole


def test_a_seeded_random_policy_scores_zero(tmp_path: Path) -> None:
    random = rg.run(V2, policy="random", num_rollouts=4, seed=0, out=str(tmp_path / "random.jsonl"))
    assert random.summary.pass_rate == 0.0
    v1 = rg.run("workflow/refund-v1", policy="random", num_rollouts=4, seed=0, out=str(tmp_path / "v1.jsonl"))
    assert v1.summary.pass_rate > 0.03  # the figure of issue 32, kept so v1 runs stay comparable


def test_v1_keeps_its_published_grading() -> None:
    assert refund_fingerprint(1) == FINGERPRINT_V1
    assert refund_fingerprint(2) != FINGERPRINT_V1


class TestRefundV2Conformance(EnvConformanceTests):
    """The conformance kit on workflow/refund-v2: oracle 1.0 and null 0.0 on every task."""

    env_id = V2
