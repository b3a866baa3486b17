"""Ready-made benchmarks come from plugins through the registry (hook ``rolloutgym_benchmarks``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import rolloutgym
from rolloutgym.evals import Evaluation, benchmark_specs, make_benchmark, run_benchmark, run_benchmarks
from rolloutgym.registry import Registry
from rolloutgym_protocol import BenchmarkSpec, hookimpl
from rolloutgym_protocol.errors import SpecError

# A third party's benchmark module: a factory with rolloutlib's signature.
PARROT_BENCHMARK = """
from rolloutgym.evals import Benchmark

def parrot(examples=None, *, word="hello"):
    items = list(examples or [word, word.upper()])
    return Benchmark("parrot", items, make_env=lambda item: item, item_id=str)
"""


class ParrotPlugin:
    @hookimpl
    def rolloutgym_benchmarks(self):
        return [BenchmarkSpec("parrot", "parrot_benchmark_for_tests:parrot", "Say it back.")]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    (tmp_path / "parrot_benchmark_for_tests.py").write_text(PARROT_BENCHMARK)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(load_entry_points=False)
    registry.register(ParrotPlugin(), name="parrot-test")
    return registry


def test_make_benchmark_finds_a_plugins_benchmark(registry: Registry):
    assert list(benchmark_specs(registry=registry)) == ["parrot"]
    benchmark = make_benchmark("parrot", None, word="hi", registry=registry)
    assert (benchmark.name, benchmark.items) == ("parrot", ("hi", "HI"))
    assert make_benchmark("parrot", ["x"], registry=registry).items == ("x",)
    with pytest.raises(ValueError, match=r"^unknown benchmark 'parot'; choose from \['parrot'\]$"):
        make_benchmark("parot", registry=registry)


def test_run_benchmark_takes_a_registered_name(registry: Registry, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("rolloutgym.evals._registered.get_registry", lambda: registry)

    result = run_benchmark("parrot", lambda item: Evaluation(score=float(item.islower())))
    assert (result.num_examples, result.score) == (2, 0.5)
    assert list(run_benchmarks(["parrot"], lambda item: Evaluation(score=1.0))) == ["parrot"]


def test_without_a_benchmark_plugin_the_error_says_what_to_install():
    bare = Registry(load_entry_points=False)
    with pytest.raises(ValueError) as caught:
        make_benchmark("gsm8k", registry=bare)
    message = str(caught.value)
    assert message.startswith("unknown benchmark 'gsm8k'; choose from []. ")
    assert re.search(r"pip install \S*plugins/benchmarks", message), message


def test_benchmark_spec_is_checked():
    assert BenchmarkSpec("gsm8k", "m:f", env_id="bench/gsm8k-v0").env_id == "bench/gsm8k-v0"
    with pytest.raises(SpecError, match="benchmark name 'GSM 8K'"):
        BenchmarkSpec("GSM 8K", "m:f")
    with pytest.raises(SpecError, match="must look like 'package.module:attribute'"):
        BenchmarkSpec("gsm8k", "m.f")
    with pytest.raises(SpecError, match="malformed environment id"):
        BenchmarkSpec("gsm8k", "m:f", env_id="gsm8k")


def test_the_core_imports_no_plugin_by_name():
    """Plugins are reached through the registry; the core imports only itself and the protocol."""
    root = Path(rolloutgym.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(root)}:{node.lineno} imports {name}"
                for name in names
                if name.startswith("rolloutgym_") and name.split(".")[0] != "rolloutgym_protocol"
            ]
    assert offenders == []
