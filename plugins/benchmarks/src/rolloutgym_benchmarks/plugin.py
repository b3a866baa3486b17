"""Hook implementations of rolloutgym-benchmarks (namespace ``bench``). Imports nothing heavy."""

from __future__ import annotations

from rolloutgym_protocol import BenchmarkSpec, EnvSpec, hookimpl

__all__ = ["rolloutgym_benchmarks", "rolloutgym_envs"]


@hookimpl
def rolloutgym_benchmarks() -> list[BenchmarkSpec]:
    """The ready-made benchmarks of ``rolloutgym.evals`` (``make_benchmark("gsm8k")``)."""
    return [
        BenchmarkSpec(
            name="gsm8k",
            entry_point="rolloutgym_benchmarks.benchmarks:gsm8k",
            description="GSM8K grade-school math (30 shipped problems; path= or dataset= for the real set).",
            env_id="bench/gsm8k-v0",
        ),
        BenchmarkSpec(
            name="aime",
            entry_point="rolloutgym_benchmarks.benchmarks:aime",
            description="AIME competition problems (17 shipped problems; path= or dataset= for the real set).",
            env_id="bench/aime-v0",
        ),
    ]


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="bench/gsm8k-v0",
            entry_point="rolloutgym_benchmarks.benchmarks:make_gsm8k_env",
            tasks="rolloutgym_benchmarks.benchmarks:gsm8k_tasks",
            description=(
                "GSM8K grade-school math word problems. Single-turn text answer; reward 1 when the final "
                "answer ('#### N', \\boxed{}, 'the answer is', bold or the last number) equals the reference "
                "exactly as a rational number. Components: correct, formatted. Ships 30 sample problems; "
                "set ROLLOUTGYM_BENCH_GSM8K to a local copy of openai/gsm8k (or 'hub') for the full set."
            ),
            tags=("benchmark", "math", "single-turn", "text"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
        ),
        EnvSpec(
            id="bench/aime-v0",
            entry_point="rolloutgym_benchmarks.benchmarks:make_aime_env",
            tasks="rolloutgym_benchmarks.benchmarks:aime_tasks",
            description=(
                "AIME competition problems. Single-turn text answer; reward 1 when the final answer is the "
                "reference integer (0-999), best given in \\boxed{}. Components: correct, formatted. Ships "
                "17 sample problems; set ROLLOUTGYM_BENCH_AIME to a local copy of MathArena/aime_2025 "
                "(or 'hub') for the real set."
            ),
            tags=("benchmark", "math", "single-turn", "text"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
        ),
    ]
