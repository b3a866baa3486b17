"""Candidate bugs by program transformation: the procedural modifications of SWE-smith.

Each operator finds *sites* in a module's functions and rewrites only the text of one site,
so a bug's diff touches as few characters as the change needs (the rest of the file, its
comments and formatting, stay byte for byte). The operators and where they are published:

==================  ==========================================================  =============================
operator            change                                                      published as
==================  ==========================================================  =============================
``op_change``       an arithmetic or bitwise operator (``+``/``-``, ``*``/``/``,  SWE-smith ``func_pm_op_change``
                    ``//``/``%``, ``<<``/``>>``, ``&``/``|``)
``cmp_flip``        a comparison (``<``/``<=``, ``>``/``>=``, ``==``/``!=``,       SWE-smith ``func_pm_op_change``;
                    ``in``/``not in``, ``is``/``is not``)                        mutation testing's ROR
``bool_op``         ``and``/``or``                                               SWE-smith ``func_pm_op_change``
``op_swap``         the operands of a non-commutative operator or comparison    SWE-smith ``func_pm_op_swap``
``off_by_one``      an integer constant ``n`` to ``n + 1`` or ``n - 1``           SWE-smith ``func_pm_op_change_const``
``flip_bool``       ``True``/``False``                                           SWE-smith ``func_pm_op_change_const``
``remove_assign``   an assignment statement deleted                             SWE-smith ``func_pm_remove_assign``
``remove_cond``     an ``if`` without ``else`` deleted                          SWE-smith ``func_pm_remove_cond``
``remove_loop``     a ``for``/``while`` loop deleted                            SWE-smith ``func_pm_remove_loop``
``invert_if``       the bodies of ``if``/``else`` swapped                        SWE-smith ``func_pm_ctrl_invert_if``
``swap_args``       two positional arguments of a call swapped                  DeepBugs' swapped arguments
==================  ==========================================================  =============================

(SWE-smith: Yang et al., 2025, "SWE-smith: Scaling Data for Software Engineering Agents";
DeepBugs: Pradel and Sen, OOPSLA 2018.) A site is kept only inside a function body, outside
docstrings. :func:`normalised_hash` names a module's AST without positions or comments, so two
candidates that produce the same program are one bug.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["OPERATORS", "CodeMutation", "apply_mutation", "find_mutations", "normalised_hash"]

OPERATORS = (
    "op_change",
    "cmp_flip",
    "bool_op",
    "op_swap",
    "off_by_one",
    "flip_bool",
    "remove_assign",
    "remove_cond",
    "remove_loop",
    "invert_if",
    "swap_args",
)

_BINARY = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "%"),
    ast.Mod: ("%", "//"),
    ast.LShift: ("<<", ">>"),
    ast.RShift: (">>", "<<"),
    ast.BitAnd: ("&", "|"),
    ast.BitOr: ("|", "&"),
}
_COMPARE = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
}
_NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift)
_SWAPPABLE_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True)
class CodeMutation:
    """One candidate bug: replace ``[start, end)`` of the module's text with ``replacement``.

    Attributes:
        operator: one of :data:`OPERATORS`.
        function: the qualified name of the function the site is in.
        line: the site's first line (1-based).
        start: character offset where the change starts.
        end: character offset where it ends.
        replacement: the new text.
        function_line: the function's first line (its first decorator's), as its code object
            names it (``co_firstlineno``).
    """

    operator: str
    function: str
    line: int
    start: int
    end: int
    replacement: str
    function_line: int = 0


class _Text:
    """Offsets of the source by (line, column in UTF-8 bytes), as the AST gives positions."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, byte_column: int) -> int:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def line_block(self, first: ast.stmt, last: ast.stmt) -> tuple[int, int] | None:
        """The whole lines of ``first``..``last`` when nothing else shares them."""
        start, _ = self.span(first)
        _, end = self.span(last)
        line_start = self.starts[first.lineno - 1]
        line_end = self.starts[min(last.end_lineno or last.lineno, len(self.lines))]
        before = self.source[line_start:start]
        after = self.source[end:line_end]
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            return None
        return line_start, line_end


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")

    yield from walk(tree, "")


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not of nested functions or classes, docstring excluded."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _operator_gap(text: _Text, left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
    """Where ``token`` sits between ``left`` and ``right`` (outside parentheses' contents)."""
    _, gap_start = text.span(left)
    gap_end, _ = text.span(right)
    gap = text.source[gap_start:gap_end]
    if "#" in gap or "\\" in gap:
        return None
    words = gap.replace("(", " ").replace(")", " ").split()
    if " ".join(words) != token:
        return None
    first = gap.find(token.split()[0])
    last_word = token.split()[-1]
    last = gap.rfind(last_word) + len(last_word)
    return gap_start + first, gap_start + last


def _expression_sites(text: _Text, name: str, node: ast.AST) -> Iterator[CodeMutation]:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        old, new = _BINARY[type(node.op)]
        where = _operator_gap(text, node.left, node.right, old)
        if where:
            yield CodeMutation("op_change", name, node.lineno, *where, new)
        if isinstance(node.op, _NON_COMMUTATIVE):
            yield from _swap(text, name, "op_swap", node.left, node.right)
    elif isinstance(node, ast.Compare):
        values = [node.left, *node.comparators]
        for index, op in enumerate(node.ops):
            old, new = _COMPARE[type(op)]
            where = _operator_gap(text, values[index], values[index + 1], old)
            if where:
                yield CodeMutation("cmp_flip", name, node.lineno, *where, new)
        if len(node.ops) == 1 and isinstance(node.ops[0], _SWAPPABLE_COMPARE):
            yield from _swap(text, name, "op_swap", node.left, node.comparators[0])
    elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        where = _operator_gap(text, node.values[0], node.values[1], old)
        if where:
            yield CodeMutation("bool_op", name, node.lineno, *where, new)
    elif isinstance(node, ast.Constant) and type(node.value) is int and node.value < 1 << 31:
        start, end = text.span(node)
        if text.source[start:end] == str(node.value):
            for value in (node.value + 1, node.value - 1) if node.value else (1,):
                if value >= 0:
                    yield CodeMutation("off_by_one", name, node.lineno, start, end, str(value))
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        start, end = text.span(node)
        yield CodeMutation("flip_bool", name, node.lineno, start, end, str(not node.value))
    elif isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args):
        yield from _swap(text, name, "swap_args", node.args[0], node.args[1])


def _swap(text: _Text, name: str, operator: str, left: ast.AST, right: ast.AST) -> Iterator[CodeMutation]:
    left_start, left_end = text.span(left)
    right_start, right_end = text.span(right)
    first, second = text.source[left_start:left_end], text.source[right_start:right_end]
    if first == second or "\n" in first + second or left_end > right_start:
        return
    middle = text.source[left_end:right_start]
    yield CodeMutation(operator, name, getattr(left, "lineno", 0), left_start, right_end, second + middle + first)


def _statement_sites(text: _Text, name: str, node: ast.AST, parent_body: list[ast.stmt]) -> Iterator[CodeMutation]:
    kinds = {
        ast.Assign: "remove_assign",
        ast.AugAssign: "remove_assign",
        ast.AnnAssign: "remove_assign",
        ast.For: "remove_loop",
        ast.While: "remove_loop",
    }
    operator = kinds.get(type(node))
    if isinstance(node, ast.If) and not node.orelse:
        operator = "remove_cond"
    if operator and isinstance(node, ast.stmt):
        block = text.line_block(node, node)
        if block:
            indent = text.lines[node.lineno - 1][: node.col_offset]
            replacement = "" if len(parent_body) > 1 else f"{indent}pass\n"
            yield CodeMutation(operator, name, node.lineno, *block, replacement)
    if isinstance(node, ast.If) and node.orelse and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
        body = text.line_block(node.body[0], node.body[-1])
        orelse = text.line_block(node.orelse[0], node.orelse[-1])
        if body and orelse and body[1] <= orelse[0]:
            first, middle = text.source[body[0] : body[1]], text.source[body[1] : orelse[0]]
            second = text.source[orelse[0] : orelse[1]]
            if first != second:
                yield CodeMutation("invert_if", name, node.lineno, body[0], orelse[1], second + middle + first)


def _bodies(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        value = getattr(node, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(node, "handlers", []) or []:
        yield handler.body


def find_mutations(source: str) -> list[CodeMutation]:
    """Every candidate of every operator in ``source`` (a module), in source order.

    Raises:
        SyntaxError: ``source`` is not Python.
    """
    tree = ast.parse(source)
    text = _Text(source)
    found: list[CodeMutation] = []
    for name, function in _functions(tree):
        first_line = min([function.lineno, *(decorator.lineno for decorator in function.decorator_list)])
        here: list[CodeMutation] = []
        parents: dict[int, list[ast.stmt]] = {}
        for body in _bodies(function):
            for statement in body:
                parents[id(statement)] = body
        for node in _own_nodes(function):
            for body in _bodies(node):
                for statement in body:
                    parents[id(statement)] = body
            here.extend(_expression_sites(text, name, node))
            if id(node) in parents:
                here.extend(_statement_sites(text, name, node, parents[id(node)]))
        found.extend(dataclasses.replace(mutation, function_line=first_line) for mutation in here)
    return sorted(found, key=lambda mutation: (mutation.start, mutation.end, mutation.operator, mutation.replacement))


def apply_mutation(source: str, mutation: CodeMutation) -> str:
    """``source`` with ``mutation`` applied."""
    return source[: mutation.start] + mutation.replacement + source[mutation.end :]


def normalised_hash(source: str) -> str | None:
    """A hash of the module's AST without positions or comments (None when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode("utf-8")).hexdigest()[:16]
