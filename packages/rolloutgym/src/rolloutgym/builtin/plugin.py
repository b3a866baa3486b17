"""Hook implementations of the built-in plugin (registered through the ``rolloutgym`` entry point group)."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, ExporterSpec, PolicySpec, hookimpl


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="toy/guess-v0",
            entry_point="rolloutgym.builtin.toy:GuessNumberEnv",
            tasks="rolloutgym.builtin.toy:guess_tasks",
            description=(
                "Guess a hidden integer with the 'guess' tool; the tool answers 'higher', 'lower' or "
                "'correct'. Multi-turn, chat messages with tool calls. Reward 1 when found within the "
                "guess budget."
            ),
            tags=("toy", "multi-turn", "tools"),
            splits=("train", "dev", "test"),
            max_steps=20,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="toy/arith-v0",
            entry_point="rolloutgym.builtin.toy:ArithmeticEnv",
            tasks="rolloutgym.builtin.toy:arith_tasks",
            description="Answer one integer arithmetic question in text. Single-turn; reward 1 for the exact value.",
            tags=("toy", "single-turn", "text"),
            splits=("train", "dev", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        ),
    ]


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec("oracle", "rolloutgym.builtin.policies:make_oracle", "The environment's reference solution."),
        PolicySpec("null", "rolloutgym.builtin.policies:make_null", "Does nothing: an empty answer, no tool calls."),
        PolicySpec("random", "rolloutgym.builtin.policies:make_random", "Samples the action space (seeded)."),
        PolicySpec(
            "chaos",
            "rolloutgym.builtin.policies:make_chaos",
            "Random hostile actions (NaN, huge, deeply nested, non-ASCII, wrong types, unknown tools); seeded.",
            example="chaos:7",
        ),
        PolicySpec("human", "rolloutgym.builtin.policies:make_human", "You, at the terminal ('rolloutgym play')."),
        PolicySpec(
            "replay",
            "rolloutgym.builtin.policies:make_replay",
            "Replays the actions recorded in a run file, task by task.",
            requires_model=True,
            example="replay:runs/previous.jsonl",
        ),
    ]


@hookimpl
def rolloutgym_exporters() -> list[ExporterSpec]:
    return [
        ExporterSpec(
            "jsonl", "rolloutgym.runs.export:export_jsonl", "One trajectory per line with its task, reward and score."
        ),
    ]
