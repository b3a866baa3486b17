"""Hook implementations of rolloutgym-bfcl (namespace ``bfcl``). Imports nothing of bfcl-eval.

Listing reads the category table and the installed ``bfcl-eval`` version from package
metadata; tasks, function docs and backends are read only when an env is made.
"""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, hookimpl

from ._categories import CATEGORIES, Category

__all__ = ["rolloutgym_envs"]

_KIND_TEXT = {
    "ast": "Single turn; reward 1 when BFCL's AST checker accepts the calls against the possible answers.",
    "irrelevance": "Single turn; reward 1 when the reply calls no function (BFCL's irrelevance check).",
    "relevance": "Single turn; reward 1 when the reply calls a function (BFCL's relevance check).",
    "multi_turn": (
        "Multi-turn chat with tool calls executed on BFCL's stateful backends; reward 1 when after every turn "
        "the backends' state equals the reference state and the reference results were produced (BFCL's checks)."
    ),
}


def _source() -> str:
    from ._data import INSTALL_HINT, PACKAGE, package_version

    version = package_version()
    return f"source: {PACKAGE} {version} (BFCL v4)" if version else f"source: {PACKAGE} (not installed: {INSTALL_HINT})"


def _spec(category: Category, source: str) -> EnvSpec:
    multi_turn = category.kind == "multi_turn"
    return EnvSpec(
        id=category.env_id,
        entry_point="rolloutgym_bfcl.envs:make_env",
        tasks=f"rolloutgym_bfcl._data:tasks_{category.bfcl}",
        description=f"BFCL v4 '{category.bfcl}': {category.summary}. {_KIND_TEXT[category.kind]} Split: test. "
        f"{source}.",
        tags=("benchmark", "bfcl", "function-calling", "tools", "multi-turn" if multi_turn else "single-turn"),
        splits=("test",),
        # Multi-turn: at most 8 turns of up to 21 tool-calling replies each, plus the turn ends.
        max_steps=200 if multi_turn else 1,
        kwargs={"env_id": category.env_id},
        replayable=True,
        forkable=not multi_turn,
        fork_note=(
            "BFCL's stateful backends are bfcl-eval's Python objects, which have no data form to store; "
            "not forkable yet (replay the actions on a fresh env instead: the env is replayable)"
        )
        if multi_turn
        else "",
    )


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    source = _source()
    return [_spec(category, source) for category in CATEGORIES]
