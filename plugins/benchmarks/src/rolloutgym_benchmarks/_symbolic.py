"""Symbolic equivalence of two answers with sympy (only when a grader asks for it).

The answer text comes from a model, so it is never handed to sympy as is: it is rewritten
to a small arithmetic language (numbers, single-letter variables, ``+ - * / ^ ( )``, ``sqrt``,
``pi``, ``log``/``exp`` and trigonometric functions) and anything else is refused. Powers whose
exponents are not small numbers or plain symbols are refused too, so ``9^{9^{9}}`` costs nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from rolloutgym.install_hints import pip_install

__all__ = ["SymbolicUnavailable", "symbolically_equal"]

MAX_LENGTH = 200
MAX_EXPONENT = 64
_FUNCTIONS = {"sqrt", "log", "ln", "exp", "sin", "cos", "tan", "pi", "oo"}
_LATEX_WORDS = {
    r"\sqrt": "sqrt",
    r"\pi": "pi",
    r"\infty": "oo",
    r"\ln": "ln",
    r"\log": "log",
    r"\exp": "exp",
    r"\sin": "sin",
    r"\cos": "cos",
    r"\tan": "tan",
}
_LATEX_WORD = re.compile(r"\\[A-Za-z]+")
_ALLOWED = re.compile(r"^[0-9A-Za-z+\-*/^().,\s]*$")
_IDENTIFIER = re.compile(r"[A-Za-z]+")


class SymbolicUnavailable(ImportError):
    """sympy is not installed; symbolic grading needs it."""


def _to_sympy_syntax(text: str) -> str | None:
    """Rewrite normalised LaTeX to sympy's input language, or None when it uses anything else."""
    if len(text) > MAX_LENGTH:
        return None
    text = _LATEX_WORD.sub(lambda match: " " + _LATEX_WORDS.get(match.group(0), "\0") + " ", text)
    text = text.replace("{", "(").replace("}", ")").replace(",", "")
    if not _ALLOWED.match(text):
        return None
    for word in _IDENTIFIER.findall(text):
        if len(word) > 1 and word not in _FUNCTIONS:
            return None
    return text.replace("^", "**").replace("ln", "log")


def _safe_powers(expression: Any, sympy: Any) -> bool:
    for power in expression.atoms(sympy.Pow):
        exponent = power.exp
        if exponent.is_Number:
            if abs(exponent) > MAX_EXPONENT:
                return False
        elif exponent.atoms(sympy.Pow) or any(abs(number) > MAX_EXPONENT for number in exponent.atoms(sympy.Number)):
            return False
    return True


@lru_cache(maxsize=4096)
def _parse(text: str) -> Any:
    try:
        import sympy  # type: ignore[import-untyped]
        from sympy.parsing.sympy_parser import (  # type: ignore[import-untyped]
            convert_xor,
            implicit_multiplication_application,
            parse_expr,
            standard_transformations,
        )
    except ImportError as error:  # pragma: no cover - exercised only without sympy
        raise SymbolicUnavailable(
            f"symbolic grading needs sympy: {pip_install('rolloutgym-benchmarks', 'symbolic')} (or pip install sympy)"
        ) from error
    syntax = _to_sympy_syntax(text)
    if syntax is None:
        return None
    names: dict[str, Any] = {
        letter: sympy.Symbol(letter) for letter in "abcdfghijklmnopqrstuvwxyzABCDFGHIJKLMNOPQRSTUVWXYZ"
    }
    names.update({"e": sympy.E, "E": sympy.E, "pi": sympy.pi, "oo": sympy.oo})
    transformations = (*standard_transformations, implicit_multiplication_application, convert_xor)
    try:
        expression = parse_expr(
            syntax, local_dict=names, global_dict=_namespace(sympy), transformations=transformations, evaluate=False
        )
    except Exception:  # sympy raises many kinds of errors on bad input; all mean "not an expression"
        return None
    if not isinstance(expression, sympy.Basic) or not _safe_powers(expression, sympy):
        return None
    return expression


@lru_cache(maxsize=1)
def _namespace(sympy: Any) -> dict[str, Any]:
    """sympy's public names without Python builtins (the input is already restricted to arithmetic)."""
    return {**{name: getattr(sympy, name) for name in sympy.__all__}, "__builtins__": {}}


def symbolically_equal(first: str, second: str) -> bool | None:
    """True/False when both parse and their difference simplifies (or does not) to 0; None when
    either does not parse."""
    left, right = _parse(first.strip()), _parse(second.strip())
    if left is None or right is None:
        return None
    import sympy

    try:
        difference = sympy.simplify(left - right)
        if difference == 0:
            return True
        return bool(left.equals(right))
    except Exception:  # simplification failures mean "could not show equal"
        return False
