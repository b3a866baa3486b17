"""Hook implementations of rolloutgym-benchmarks. Imports nothing heavy.

The envs (namespaces bench, rg, agentdojo, ifeval, scienceworld, tau2) are registered by
:mod:`.specs`, one function per namespace, declared in ``pyproject.toml`` (entry point group
``rolloutgym.envs``) so that a lookup imports only the namespace it names.
"""

from __future__ import annotations

from rolloutgym_protocol import BenchmarkSpec, hookimpl

__all__ = ["rolloutgym_benchmarks"]


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
