"""The oracle scores 1.0 on every single-turn task except those BFCL's own checker rejects.

Every task of every AST category is played by the oracle (seconds); the tasks where it
misses must be exactly ``GROUND_TRUTH_REJECTED``, and on each of those the package's
``ast_checker`` must reject the oracle's calls too. Multi-turn categories: a seeded sample
here and in the conformance tests; ``benchmarks/bfcl_oracle.py`` plays all 4,441 tasks.
"""

from __future__ import annotations

import json
from typing import Any

from rolloutgym_bfcl import CATEGORIES, GROUND_TRUTH_REJECTED, BfclSingleTurnEnv, tasks_for_env


def test_oracle_misses_only_where_bfcl_rejects_its_own_answers(
    reference_ast_checker: Any, reference_model: str
) -> None:
    from bfcl_eval.constants.enums import Language

    languages = {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}
    missed = {}
    played = 0
    for category in (category for category in CATEGORIES if category.kind != "multi_turn"):
        for task in tasks_for_env(category.env_id):
            environment = BfclSingleTurnEnv(task, category)
            environment.reset(seed=0)
            action = environment.oracle_action()
            score = environment.evaluate(action)
            played += 1
            if score.value < 1.0:
                missed[task.id] = (task, category, action)
    assert played > 3000
    assert set(missed) == set(GROUND_TRUTH_REJECTED), sorted(set(missed) ^ set(GROUND_TRUTH_REJECTED))
    for task, category, action in missed.values():
        calls = [{call["name"]: call["arguments"]} for call in action["tool_calls"]]
        result = reference_ast_checker.ast_checker(
            task.functions,
            json.loads(json.dumps(calls)),
            task.ground_truth,
            languages[category.language],
            task.category,
            reference_model,
        )
        assert not result["valid"], f"{task.id}: bfcl-eval accepts the oracle's calls, we do not"
