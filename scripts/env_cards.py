"""Generate docs/reference/env-report-cards.md: the report card of every shipped env (``--check``: is it current?).

Runs ``rolloutgym.check`` on every registered env (a seeded sample of ``--sample`` tasks each),
stores the cards in ``docs/reference/env-report-cards.json`` and renders the page from them.
``--check`` re-renders the page from the stored cards and fails when it differs (tests/test_env_cards.py);
``--only NS`` re-checks only the envs of one namespace and keeps the other stored cards.

A failure whose reason is known is listed in ``KNOWN_FAILURES`` (env id -> {check: reason}): the stored
cards keep the raw results, and the page (and tests/test_env_cards.py) show such a failure as ``known``
with its reason, never silently as a pass. Do not weaken a probe to make a card green.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "env-report-cards.md"
CARDS = ROOT / "docs" / "reference" / "env-report-cards.json"
EPISODE_TIMEOUT = 300.0

# Failures found by the check on shipped envs, with the reason (reported to the env's owners).
_AGENTDOJO_TEXT = (
    "AgentDojo's own utility check of this task looks for the expected values as substrings of the final answer, "
    "so a hedged, negated, <think>-only or buried answer after the right tool calls passes (the benchmark's grader)"
)
_AGENTDOJO_PROBES = ("probe:hedge", "probe:negation", "probe:think", "probe:tool-call-answer", "probe:huge-reply")
_MATH_NEGATION = (
    "the grader extracts the final answer (math-verify, or the last number / \\boxed{}) and ignores the words "
    "around it, as GSM8K/MATH graders do: 'The answer is not 84.' scores 1"
)
_RG_TEXT = "reasoning-gym's own score_answer for this dataset accepts the right answer inside a longer reply"
_SCIENCEWORLD = (
    "two oracle episodes with seed 0 differ (ScienceWorld's Java simulator lists and picks objects in an order "
    "that changes between runs), so a run cannot be replayed"
)

# Failures found by the check on shipped envs, with the reason (reported to the env's owners).
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    "scienceworld/boil-v0": {
        "ceiling": "the oracle replays a gold path that does not fit when the world differs (see determinism)",
    },
    "scienceworld/inclined-plane-friction-unnamed-surfaces-v0": {
        "ceiling": "the oracle's gold path reached the step limit on the sampled task (ScienceWorld score 20/100)",
    },
    "toy/guess-v0": {
        "lint": "guess_tasks() draws 30 (range, target) pairs from a seeded generator: some repeat, across splits too",
    },
    "trl/digits-v0": {
        name: "a format-reward demo of the TRL plugin: the reward is the share of digits in the reply, any digits"
        for name in ("probe:constant", "probe:keyword-stuffing", "probe:numbers")
    }
    | {"lint": "the generated digit-string prompts repeat, across splits too"},
    "trl/sums-v0": {
        "probe:negation": "the grader reads the last integer of the reply, so 'The answer is not 111.' scores 1",
        "lint": "the generated sums repeat, across splits too",
    },
    "tau2/retail-v0": {
        name: "tau2-bench's evaluator checks that the required information appears in the agent's messages "
        "(communicate_info, a substring check), so a hedged, negated or buried final message passes (the benchmark's)"
        for name in _AGENTDOJO_PROBES
    },
    "toy/arith-v0": {
        "probe:negation": "the grader reads the last integer of the reply, so 'The answer is not 88.' scores 1",
    },
    "agentdojo/travel-v0": {name: _AGENTDOJO_TEXT for name in _AGENTDOJO_PROBES},
    "agentdojo/travel-injection-v0": {name: _AGENTDOJO_TEXT for name in _AGENTDOJO_PROBES},
    "agentdojo/workspace-injection-v0": {
        name: _AGENTDOJO_TEXT for name in ("probe:keyword-stuffing", *_AGENTDOJO_PROBES)
    },
    **{
        env_id: {"probe:negation": _MATH_NEGATION}
        for env_id in (
            "bench/aime-2024-v0",
            "bench/aime-2025-i-v0",
            "bench/aime-v0",
            "bench/cnmo-mmath-v0",
            "bench/math-500-mmath-v0",
            "bench/mmath-en-v0",
        )
    },
    "bench/gsm8k-v0": {
        "probe:negation": _MATH_NEGATION,
        "probe:hedge": "the grader takes the last '####' answer: '#### 8 or #### 7' scores 1",
        "probe:tool-call-answer": "the grader reads '#### 7' inside the <tool_call> markup of a text reply",
    },
    "bfcl/live-relevance-v0": {
        "probe:call-every-tool": "BFCL's relevance category scores any reply that calls a function (its definition)",
    },
    "browser/miniwob-v0": {
        "ceiling": "the oracle scripts only some MiniWoB tasks; the others raise 'no scripted solution'",
    },
    "ifeval/instructions-v0": {
        "probe:hedge": "IFEval grades the reply's form (how it ends), not one answer: a hedge that ends right passes",
    },
    "rg/algebra-v0": {"probe:negation": _RG_TEXT},
    "rg/algorithmic-v0": {
        name: _RG_TEXT
        for name in ("probe:hedge", "probe:negation", "probe:think", "probe:tool-call-answer", "probe:huge-reply")
    },
    "rg/arithmetic-v0": {"probe:negation": _RG_TEXT},
    "rg/code-v0": {"probe:negation": _RG_TEXT},
    "rg/cognition-v0": {"probe:negation": _RG_TEXT},
    "rg/geometry-v0": {"probe:negation": _RG_TEXT},
    "rg/graphs-v0": {
        name: _RG_TEXT
        for name in ("probe:hedge", "probe:negation", "probe:think", "probe:tool-call-answer", "probe:huge-reply")
    },
    "rg/induction-v0": {"probe:negation": _RG_TEXT},
    "rg/logic-v0": {"probe:negation": _RG_TEXT},
    "rg/mixture-v0": {name: _RG_TEXT for name in ("probe:hedge", "probe:negation", "probe:think", "probe:huge-reply")},
}
KNOWN_BY_NAMESPACE: dict[str, dict[str, str]] = {
    "scienceworld": {
        "determinism": _SCIENCEWORLD,
    },
}

# Per-env settings of the check, the same as the env's own conformance test (right answers that do nothing).
CARD_OPTIONS: dict[str, dict[str, Any]] = {
    "bfcl/irrelevance-v0": {"min_score": 1.0},  # the right answer is to call no function
    "bfcl/live-irrelevance-v0": {"min_score": 1.0},
}
NULL_PASSES = {  # task id prefixes whose right answer is to do nothing (plugins/*/tests/test_conformance.py)
    "agentdojo/banking": ("banking/user_task_5", "banking/user_task_8", "banking/user_task_9", "banking/user_task_10"),
}
COLUMNS = ("ceiling", "floor", "determinism", "probe", "lint", "containment")

# What changed under an env id after it shipped, and why the id was kept (the page lists it on the env's card).
# The rule, as a benchmark's maintainers apply it: a change that can move the score of an honest answer (other
# problems, other rules, another reward) gets a new version, the old one kept (see workflow/refund-v0..v2);
# a grader fix that only refuses what was never an answer (a fix that empties the caller's list, a value that
# answers every comparison with yes, a hedge in disguise) stays under the id and is listed here with its date:
# a run of the id before that date may count such false passes, and `rolloutgym rescore` re-grades a replayable
# run file with the grader of today.
_LYING_VALUES = (
    "2026-12-07, issue 50: what the code under test returns must be plain data, compared on the grader's side, "
    "and it gets copies of the grader's arguments; correct solutions score as before (the reference solution of "
    "every task still scores 1; 2,700 lying submissions scored 0 in benchmarks/code_lying_values.py)"
)
CHANGED_UNDER_ID: dict[str, str] = {
    "code/pybugs-v0": (
        f"{_LYING_VALUES}; bisect-insert-end computes its expected value before the call (a fix that emptied the "
        "caller's list passed), lru-recency adds a reference-model test (a scripted __contains__ passed)"
    ),
    "code/pyfunc-v0": _LYING_VALUES,
    "code/humaneval-v0": f"{_LYING_VALUES}; HumanEval/4 with an object answering every arithmetic with itself "
    "scored 1.0 before",
    "rg/logic-v0": (
        "2026-12-07, issue 50: a slot whose propositional_logic problem accepts a contradiction such as (P ∧ ¬P) "
        "(inconsistent premises entail every formula) gets a replacement problem from its own seed (48 of the first "
        "200 propositional slots; metadata rolloutgym_replaced). This changes problems, so it should have been "
        "rg/logic-v1 with v0 frozen: pending the catalogue's move to specs.py (issue 46); until then runs of the "
        "id before that date are not comparable on those slots"
    ),
    "rg/mixture-v0": "2026-12-07, issue 50: its propositional_logic slots are replaced as rg/logic-v0's (see there)",
    "workflow/refund-v1": (
        "2026-12-07, issue 50: the answer's terms are matched after Unicode normalisation (NFKC, format characters "
        "removed, Cyrillic/Greek look-alikes folded), so a competing status in full-width letters or split by soft "
        "hyphens is a hedge; a plain-text answer scores as before"
    ),
    "workflow/refund-v0": "2026-12-07, issue 50: the answer-term matching of workflow/refund-v1 (see there)",
    "workflow/refund-v2": "2026-12-07, issue 50: the answer-term matching of workflow/refund-v1 (see there)",
    "tau2/retail-v0": (
        "2026-12-07, issue 50: reward='training' added (a reward that the benchmark's own basis cannot give for a "
        "reply that skips the writes); the default, reward='benchmark', is tau2's score as before; tool arguments "
        "nested past tau2's evaluator's depth are refused before tau2 sees them"
    ),
    "tau2/airline-v0": "2026-12-07, issue 50: as tau2/retail-v0 (see there)",
    "tau2/telecom-v0": "2026-12-07, issue 50: as tau2/retail-v0 (see there)",
    "tau2/telecom-full-v0": "2026-12-07, issue 50: as tau2/retail-v0 (see there)",
    "ifeval/instructions-v0": (
        "2026-12-07, issue 50: reward='training' added (form and content); the default, reward='benchmark', is "
        "IFEval's own check as before"
    ),
}


def check_env(env_id: str, sample: int) -> dict[str, Any]:
    """One env's card as a dict; an env that cannot be checked here gets ``error`` instead of results."""
    from rolloutgym.checks import check

    started = time.perf_counter()
    options = dict(CARD_OPTIONS.get(env_id, {}))
    prefixes = next((value for key, value in NULL_PASSES.items() if env_id.startswith(key)), ())
    try:
        if prefixes:
            from rolloutgym.sources import resolve_env

            ids = resolve_env(env_id).task_ids
            options["null_exempt"] = [task for task in ids if str(task).startswith(prefixes)]
        report = check(env_id, sample=sample, seed=0, timeout=EPISODE_TIMEOUT, **options)
    except Exception as exc:  # an optional dependency missing, a service not reachable: say so on the card
        return {"env_id": env_id, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
    card = _trimmed(report.to_dict())
    card["seconds"] = round(time.perf_counter() - started, 1)
    return card


def _write_cards(cards: list[dict[str, Any]]) -> None:
    """The cards sorted by env id, one per line (small, and a re-check changes only its env's line)."""
    lines = [json.dumps(card, sort_keys=True) for card in sorted(cards, key=lambda card: card["env_id"])]
    CARDS.write_text("[\n" + ",\n".join(lines) + "\n]\n")


def _trimmed(card: dict[str, Any], findings: int = 5) -> dict[str, Any]:
    """The card with at most ``findings`` findings per check (the page shows the first)."""
    for result in card.get("results", []):
        if len(result.get("findings", [])) > findings:
            result["findings"] = result["findings"][:findings] + [f"... {len(result['findings']) - findings} more"]
    return card


def known_failures(env_id: str) -> dict[str, str]:
    """``{check: reason}`` of an env: its own entries and those of its namespace (``KNOWN_BY_NAMESPACE``)."""
    return {**KNOWN_BY_NAMESPACE.get(env_id.split("/")[0], {}), **KNOWN_FAILURES.get(env_id, {})}


def waived(card: dict[str, Any]) -> dict[str, Any]:
    """The card with the failures of ``known_failures`` turned into ``known`` (with their reasons)."""
    known = known_failures(card["env_id"])
    results = []
    for result in card.get("results", []):
        if result["status"] == "fail" and result["name"] in known:
            result = {**result, "status": "known", "reason": known[result["name"]]}
        results.append(result)
    return {**card, "results": results} if "results" in card else card


def _cell(card: dict[str, Any], column: str) -> str:
    results = [result for result in card.get("results", []) if result["name"].split(":")[0] == column]
    if not results:
        return "–"
    statuses = [result["status"] for result in results]
    for status in ("fail", "known", "warn"):
        named = [result["name"].split(":", 1)[-1] for result in results if result["status"] == status]
        if named:
            return f"{status}: {', '.join(named)}" if column == "probe" else status
    if all(status == "skip" for status in statuses):
        return "n/a"
    if column == "probe":
        return f"pass ({statuses.count('pass')} probes)"
    return "pass"


def render(cards: list[dict[str, Any]]) -> str:
    """The page from the stored cards (sorted by env id)."""
    lines = [
        "# Env report cards",
        "",
        "Generated by `python scripts/env_cards.py` from `rolloutgym check` on every shipped env (a seeded",
        "sample of tasks each); do not edit by hand. A cell names the checks that did not pass; `known` is a",
        "failure whose reason is recorded below; `n/a` means no check of that kind applies (no tools, no",
        "sandbox). Run `rolloutgym check ENV` for the full card, or see [Check an env](../how-to/check-an-env.md).",
        "",
        "| env | tasks checked | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    notes = []
    for card in sorted((waived(card) for card in cards), key=lambda card: card["env_id"]):
        if "error" in card:
            lines.append(f"| `{card['env_id']}` | not checked here | " + " | ".join("–" for _ in COLUMNS) + " |")
            notes.append(f"* `{card['env_id']}`: not checked: {card['error']}")
            continue
        checked = f"{len(card['tasks_checked'])} of {card['tasks_total']}"
        lines.append(
            f"| `{card['env_id']}` | {checked} | " + " | ".join(_cell(card, column) for column in COLUMNS) + " |"
        )
        for result in card["results"]:
            if result["status"] in ("fail", "known"):
                why = result.get("reason") or (result.get("findings") or [result["summary"]])[0]
                notes.append(f"* `{card['env_id']}` {result['name']} ({result['status']}): {why}")
    if notes:
        lines += ["", "## Failures and their reasons", "", *notes]
    changed = [f"* `{env_id}`: {why}" for env_id, why in sorted(CHANGED_UNDER_ID.items())]
    lines += ["", "## Changed under the same id", "", *changed]
    return "\n".join(lines) + "\n"


def relint() -> None:
    """Replace the lint results of every stored card by a fresh lint (no episodes run)."""
    from rolloutgym.checks._lint import lint_results
    from rolloutgym.sources import resolve_env

    cards = json.loads(CARDS.read_text())
    for card in cards:
        if "results" not in card:
            continue
        fresh = [result.to_dict() for result in lint_results(resolve_env(card["env_id"]), card["env_id"])]
        others = [result for result in card["results"] if not result["name"].startswith("lint")]
        card["results"] = fresh + others
        card["ok"] = not any(result["status"] == "fail" for result in card["results"])
    cards = [_trimmed(card) for card in cards]
    _write_cards(cards)
    PAGE.write_text(render(cards))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the page is not the render of the cards")
    parser.add_argument("--sample", type=int, default=2, help="tasks per env (a seeded sample)")
    parser.add_argument("--only", help="re-check only the envs of this namespace")
    parser.add_argument("--missing", action="store_true", help="check only the envs without a card (or not checked)")
    parser.add_argument("--relint", action="store_true", help="only run the lint again on the stored cards (cheap)")
    arguments = parser.parse_args(argv)
    if arguments.check:
        cards = json.loads(CARDS.read_text())
        if PAGE.read_text() != render(cards):
            print(f"{PAGE} is stale: run python scripts/env_cards.py --only NS (or without --only)", file=sys.stderr)
            return 1
        return 0
    if arguments.relint:
        relint()
        return 0
    from rolloutgym.registry import get_registry

    env_ids = sorted(get_registry().env_specs())
    stored = {card["env_id"]: card for card in json.loads(CARDS.read_text())} if CARDS.is_file() else {}
    if arguments.only:
        env_ids = [env_id for env_id in env_ids if env_id.split("/")[0] == arguments.only]
    if arguments.missing:
        env_ids = [env_id for env_id in env_ids if env_id not in stored or "error" in stored[env_id]]
    for env_id in env_ids:
        stored[env_id] = check_env(env_id, arguments.sample)
        card = stored[env_id]
        verdict = "error" if "error" in card else ("ok" if card["ok"] else "FAIL")
        print(f"{env_id}: {verdict} ({card.get('seconds', 0)} s)", flush=True)
        # read again before writing: another run (--only another namespace) may have stored cards meanwhile
        current = {card["env_id"]: card for card in json.loads(CARDS.read_text())} if CARDS.is_file() else {}
        stored = {**current, env_id: card}
        _write_cards(list(stored.values()))
    PAGE.write_text(render(list(stored.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
