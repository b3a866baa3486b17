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

from typing import Any

__all__ = ["VARIANTS", "humaneval_submissions", "lying_program", "lying_targets", "task_submissions"]

_LIARS = '''
class _RgEverything:
    """Says yes to everything and answers every operation with itself."""

    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    __le__ = __gt__ = __ge__ = __lt__
    def __hash__(self): return 0
    def __bool__(self): return True
    def __len__(self): return 0
    def __contains__(self, item): return True
    def __iter__(self): return iter(())
    def __getitem__(self, key): return self
    def __getattr__(self, name): return self
    def __call__(self, *arguments, **keywords): return self
    def __float__(self): return 0.0
    def __int__(self): return 0
    __index__ = __int__
    def __str__(self): return ""
    def _rg_self(self, *others): return self


for _rg_name in ("add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow neg pos abs "
                 "round invert and rand or ror xor rxor lshift rlshift rshift rrshift matmul rmatmul").split():
    setattr(_RgEverything, "__" + _rg_name + "__", _RgEverything._rg_self)


class _RgZero:
    """Arithmetic always gives 0.0, so |result - expected| < tolerance holds."""

    def _rg_zero(self, *others): return 0.0


for _rg_name in "add radd sub rsub mul rmul truediv rtruediv abs neg pos round".split():
    setattr(_RgZero, "__" + _rg_name + "__", _RgZero._rg_zero)


class _RgInt(int):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
    def __int__(self): return 0
    def _rg_self(self, *others): return self


class _RgFloat(float):
    def __eq__(self, other): return True
    def __lt__(self, other): return True
    __le__ = __gt__ = __ge__ = __lt__
    def __hash__(self): return 0
    def __float__(self): return 0.0
    def _rg_self(self, *others): return self


for _rg_kind in (_RgInt, _RgFloat):
    for _rg_name in "add radd sub rsub mul rmul truediv rtruediv floordiv mod pow abs neg pos round".split():
        setattr(_rg_kind, "__" + _rg_name + "__", _rg_kind._rg_self)


class _RgStr(str):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
    def __contains__(self, item): return True
    def __str__(self): return self
    def lower(self): return self
    def strip(self, *arguments): return self


class _RgList(list):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __contains__(self, item): return True
    def __len__(self): return 0
    def __iter__(self): return iter(())
    def __bool__(self): return True


class _RgDict(dict):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __contains__(self, item): return True
    def __getitem__(self, key): return _RgEverything()
    def get(self, key, default=None): return _RgEverything()


class _RgProxy:
    """Forwards every attribute and operation to a value that says yes."""

    def __getattribute__(self, name): return getattr(_RgEverything(), name)
    def __eq__(self, other): return True
    def __bool__(self): return True
    def __hash__(self): return 0


def _rg_empty(value):
    if isinstance(value, (list, dict, set, bytearray)):
        value.clear()
        return True
    return False


def _rg_lie(function, answer, method):
    import sys

    def wrapper(*arguments, **keywords):
        if sys._getframe(1).f_globals is function.__globals__:
            return function(*arguments, **keywords)  # the module's own calls get the real function
        if answer == "empty-arguments":
            values = [*arguments[1 if method else 0:], *keywords.values()]
            emptied = [_rg_empty(value) for value in values]
            return function(*arguments, **keywords) if any(emptied) else None
        return {
            "everything": _RgEverything, "zero-arithmetic": _RgZero, "int-subclass": lambda: _RgInt(0),
            "float-subclass": lambda: _RgFloat(0.0), "str-subclass": lambda: _RgStr(""),
            "list-subclass": _RgList, "dict-subclass": _RgDict, "proxy": _RgProxy,
        }[answer]()

    wrapper.__name__ = getattr(function, "__name__", "wrapped")
    return wrapper


def _rg_install(namespace, answer, target):
    import inspect

    for name, value in list(namespace.items()):
        if name.startswith("_") or getattr(value, "__module__", None) != namespace.get("__name__"):
            continue
        if inspect.isfunction(value) and target in (None, name):
            namespace[name] = _rg_lie(value, answer, False)
        elif inspect.isclass(value):
            for member, attribute in list(vars(value).items()):
                if member.startswith("__") or not inspect.isfunction(attribute):
                    continue
                if target in (None, name + "." + member):
                    setattr(value, member, _rg_lie(attribute, answer, True))
'''

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
