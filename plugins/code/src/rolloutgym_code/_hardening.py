"""Host-side preparation of hidden test files: exact-type assertions and the expected tests.

* :func:`harden_test_source` rewrites the assertions of a (trusted) test file so that the
  values compared must be plain builtin values wherever the other side is one (see
  :mod:`rolloutgym_code._guard`): ``assert A == B`` keeps pytest's message with the values;
  comparisons nested in ``and``/``or`` and bare ``assert f(...)`` go through the guard too.
* :func:`expected_tests` lists the test functions a file defines (``path::name`` and
  ``path::Class::name``), so a test that never ran (or was made to vanish) counts as failed.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["GUARD_MODULE", "expected_tests", "harden_test_source"]

GUARD_MODULE = "rolloutgym_sandbox_guard"
_LEFT = "__rolloutgym_left__"
_RIGHT = "__rolloutgym_right__"


def _guard_call(function: str, *arguments: ast.expr) -> ast.Call:
    module = ast.Call(ast.Name("__import__", ast.Load()), [ast.Constant(GUARD_MODULE)], [])
    return ast.Call(ast.Attribute(module, function, ast.Load()), list(arguments), [])


class _Expressions(ast.NodeTransformer):
    """Comparisons and truth tests inside an assertion, rewritten as guarded expressions."""

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node  # leave nested scopes alone

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        operator = node.ops[0]
        left, right = node.left, node.comparators[0]
        if isinstance(operator, (ast.Eq, ast.NotEq)):
            pair = _guard_call("plain", left, right)
        elif isinstance(operator, (ast.In, ast.NotIn)):
            pair = _guard_call("member", left, right)
        else:
            return node
        # (lambda pair: pair[0] OP pair[1])(guard(...)) keeps one evaluation of each side.
        argument = ast.arguments(posonlyargs=[], args=[ast.arg("pair")], kwonlyargs=[], kw_defaults=[], defaults=[])
        pair_name = ast.Name("pair", ast.Load())
        body = ast.Compare(
            ast.Subscript(pair_name, ast.Constant(0), ast.Load()),
            [operator],
            [ast.Subscript(pair_name, ast.Constant(1), ast.Load())],
        )
        return ast.Call(ast.Lambda(argument, body), [pair], [])


class _Assertions(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.stmt | list[ast.stmt]:
        test = node.test
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
        ):
            function = "plain" if isinstance(test.ops[0], (ast.Eq, ast.NotEq)) else "member"
            inner_left = _Expressions().visit(test.left)
            inner_right = _Expressions().visit(test.comparators[0])
            unpack = ast.Assign(
                [ast.Tuple([ast.Name(_LEFT, ast.Store()), ast.Name(_RIGHT, ast.Store())], ast.Store())],
                _guard_call(function, inner_left, inner_right),
            )
            check = ast.Assert(
                ast.Compare(ast.Name(_LEFT, ast.Load()), test.ops, [ast.Name(_RIGHT, ast.Load())]), node.msg
            )
            return [unpack, check]
        if isinstance(test, ast.Call):
            node.test = _guard_call("truth", _Expressions().visit(test))
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call):
            node.test = ast.UnaryOp(ast.Not(), _guard_call("truth", _Expressions().visit(test.operand)))
        else:
            node.test = _Expressions().visit(test)
        return node


# CPython 3.11 keeps the AST builder's recursion counter in shared state: two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch".
# Grading runs several episodes in threads, so parsing here is serialised.
_AST_LOCK = threading.Lock()


def harden_test_source(source: str) -> str:
    """``source`` with guarded assertions; returned unchanged when it does not parse."""
    with _AST_LOCK:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return source
        tree = _Assertions().visit(tree)
        ast.fix_missing_locations(tree)
        return ast.unparse(tree) + "\n"


def expected_tests(path: str, source: str) -> list[str]:
    """Node-id prefixes of the test functions in ``source`` (pytest's default naming rules)."""
    try:
        with _AST_LOCK:
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name.startswith("test"):
                    found.append(f"{path}::{node.name}::{member.name}")
    return found
