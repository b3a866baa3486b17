"""Lying values: the submissions the code envs' graders must score 0, for tests and benchmarks.

Each *variant* turns a module of a correct solution into a wrong one: code appended to the
module wraps one function or method it defines (or all of them; not dunders) so that a call
from outside the module answers with a
value that lies (an object overriding ``__eq__``/``__hash__``/``__contains__``/``__len__``/
``__iter__``/``__bool__``/arithmetic, subclasses of ``int``/``float``/``str``/``list``/``dict``
that do, a proxy answering every attribute), or empties the caller's lists, dicts and sets and
answers what the function gives for the emptied arguments (aliasing turned against a test
that computes its expected value from an argument after the call; a call without a list,
dict or set among its arguments does nothing and answers ``None``). Every variant is wrong for
every task (a lying value is not the answer; emptied arguments give the answer for other
input), so a variant that scores above 0 is a hole in the grading.

Used by ``plugins/code/tests/test_code_lying_values.py`` (a sample) and
``benchmarks/code_lying_values.py`` (every HumanEval problem and every pybugs task).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

__all__ = ["VARIANTS", "humaneval_submissions", "lying_program", "lying_targets", "task_submissions"]

# The wrappers appended to a solution module: Python source kept as data (never imported here).
_LIARS = (resources.files(__package__) / "data" / "lying_values.py.txt").read_text(encoding="utf-8")

VARIANTS = (
    "everything",
    "zero-arithmetic",
    "int-subclass",
    "float-subclass",
    "str-subclass",
    "list-subclass",
    "dict-subclass",
    "proxy",
    "empty-arguments",
)
"""How the wrapped functions answer (see the module docstring)."""


def lying_targets(source: str) -> list[str]:
    """The public functions (``name``) and methods (``Class.name``, not dunders) ``source`` defines."""
    import ast

    found = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            found += [
                f"{node.name}.{member.name}"
                for member in node.body
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and not member.name.startswith("__")
            ]
    return found


def lying_program(source: str, variant: str, target: str | None = None) -> str:
    """``source`` (a module of a correct solution) with the function or method ``target``
    (every one it defines when None) answering as ``variant`` says."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; the variants are {', '.join(VARIANTS)}")
    return f"{source.rstrip()}\n\n{_LIARS}\n_rg_install(globals(), {variant!r}, {target!r})\n"


def humaneval_submissions(problem: Any) -> list[tuple[str, str]]:
    """``(variant, program)`` for a HumanEval problem: its canonical solution made to lie."""
    program = problem.prompt + problem.canonical_solution
    return [(variant, lying_program(program, variant, problem.entry_point)) for variant in VARIANTS]


def task_submissions(task: Any) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]]]:
    """``(the fixed files, [(variant:target, files)])`` for a pybugs/pyfunc task: each public
    function or method of a file the reference fix changes, named in the task's tests, made to
    lie in turn (a helper the tests never call cannot be reached, so it is left out)."""
    from ._patch import apply_unified_diff

    changed = apply_unified_diff(task.reference_patch, task.files)
    fixed = {path: text for path, text in {**task.files, **changed}.items() if text is not None}
    tests = "\n".join([*task.hidden_tests.values(), *(task.files.get(path, "") for path in task.visible_tests)])
    submissions = []
    for path, text in sorted(changed.items()):
        if text is None or not path.endswith(".py"):
            continue
        for target in lying_targets(text):
            if target.rsplit(".", 1)[-1] not in tests:
                continue
            for variant in VARIANTS:
                submissions.append((f"{variant}:{target}", {**fixed, path: lying_program(text, variant, target)}))
    return fixed, submissions
