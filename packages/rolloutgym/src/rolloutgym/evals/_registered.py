"""Ready-made benchmarks found through the registry (hook ``rolloutgym_benchmarks``), never by package name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol import BenchmarkSpec

from ..registry import get_registry, import_entry_point

if TYPE_CHECKING:
    from ._runner import Benchmark

__all__ = ["BenchmarkFactory", "benchmark_factory", "benchmark_specs", "make_benchmark", "missing_benchmarks_hint"]

BenchmarkFactory = Callable[..., "Benchmark[Any]"]
"""What a benchmark name resolves to: ``factory(examples=None, **options) -> Benchmark``."""


def benchmark_specs(*, registry: Any = None) -> dict[str, BenchmarkSpec]:
    """Every installed benchmark's spec, by name."""
    return {name: entry.spec for name, entry in (registry or get_registry()).benchmark_specs().items()}


def missing_benchmarks_hint(*, registry: Any = None) -> str:
    """What to install when no plugin registers a benchmark (the GSM8K/AIME ones come from rolloutgym-benchmarks)."""
    hint = (registry or get_registry()).install_hint("bench")
    return f"The ready-made benchmarks (gsm8k, aime) come from the benchmarks plugin. {hint}".rstrip()


def benchmark_factory(name: str, *, registry: Any = None) -> BenchmarkFactory:
    """The factory of benchmark ``name``, imported from the plugin that registers it.

    Raises:
        ValueError: no installed plugin registers ``name`` (the message lists the names that
            exist, and says what to install when there are none).
    """
    specs = benchmark_specs(registry=registry)
    if name not in specs:
        message = f"unknown benchmark {name!r}; choose from {sorted(specs)}"
        if not specs:
            message += f". {missing_benchmarks_hint(registry=registry)}"
        raise ValueError(message)
    factory: BenchmarkFactory = import_entry_point(specs[name].entry_point, what=f"benchmark {name!r}")
    return factory


def make_benchmark(name: str, examples: Any = None, *, registry: Any = None, **options: Any) -> Benchmark[Any]:
    """``make_benchmark("gsm8k")`` / ``make_benchmark("aime", path=...)``: a registered benchmark by name.

    Raises:
        ValueError: unknown name (see :func:`benchmark_factory`).
    """
    return benchmark_factory(name, registry=registry)(examples, **options)
