"""rg/logic-v0: no constant reply solves a propositional-logic task (issue 50, class 8).

``<answer>(P ∧ ¬P)</answer>`` scored 1.0 on 5 of the first 29 propositional-logic tasks (slots
3, 24, 115, 122, 171): their premises are inconsistent, so reasoning-gym's scorer accepts any
formula. Such a problem is now replaced in its slot (``rg.CONSTANT_PROBES``); the oracle still
scores 1.0 on the replacement and the other slots keep their problems.
"""

from __future__ import annotations

import pytest

pytest.importorskip("reasoning_gym")

from rolloutgym_benchmarks._rg_catalogue import family_generators  # noqa: E402
from rolloutgym_benchmarks.rg import CONSTANT_PROBES, constant_solution, make_env, rg_tasks  # noqa: E402

CONSTANTS = ["(P ∧ ¬P)", "(Q ∧ ¬Q)", "(¬R ∧ R)", "((P → Q) ∧ ¬(P → Q))", "(P ∧ ¬P) ∨ (Q ∧ ¬Q)"]
REPORTED = ["train-000003", "train-000024", "train-000115", "train-000122", "train-000171"]


def test_no_constant_contradiction_scores_on_the_first_29_propositional_tasks() -> None:
    generators = family_generators("logic")
    position = generators.index("propositional_logic")
    slots = [task for task in rg_tasks("train", 29 * len(generators)) if task.index % len(generators) == position]
    scored, replaced = {}, []
    for task in slots:
        env = make_env(task, family="logic")
        assert env.generator == "propositional_logic"
        if "rolloutgym_replaced" in env.entry["metadata"]:
            replaced.append(task.id)
        assert env.evaluate(env.oracle_action()).value == 1.0 or task.id not in REPORTED, task.id
        for constant in CONSTANTS:
            if env.evaluate(f"<answer>{constant}</answer>").value:
                scored[(task.id, constant)] = True
        assert constant_solution(env.generator, env.dataset, env.entry) is None
    assert not scored, scored
    assert sorted(replaced) == REPORTED  # exactly the degenerate ones were replaced
    assert set(CONSTANT_PROBES) == {"propositional_logic"}


def test_a_replaced_slot_is_a_different_problem_and_the_oracle_solves_it() -> None:
    task = next(task for task in rg_tasks("train", 4) if task.id == REPORTED[0])
    env = make_env(task, family="logic")
    assert env.entry["metadata"]["rolloutgym_replaced"] >= 1
    assert env.evaluate(env.oracle_action()).value == 1.0
    assert env.evaluate("<answer>(P ∧ ¬P)</answer>").value == 0.0
    again = make_env(task, family="logic")  # the replacement is deterministic
    assert again.entry["question"] == env.entry["question"]
