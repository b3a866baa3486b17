"""Execution match: does a query's result equal the gold query's result?

Rules (each one fixes a known bug of other SQL environments):

* results are **multisets**: a missing or an extra duplicate row fails;
* row order matters only when the gold query orders its result (a top-level ORDER BY);
* column order is ignored by default (``column_order="any"``), column names are ignored by
  default (``column_names="ignore"``); both can be made strict;
* numbers compare with a tolerance (``math.isclose`` with ``rel_tol``/``abs_tol``), so
  ``3`` equals ``3.0`` but ``12.35`` does not equal ``12.3456``;
* NULL equals only NULL (never 0 or the empty string).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._results import normalise_value

__all__ = ["MatchOptions", "ResultComparison", "compare_results", "orders_result"]


@dataclass(frozen=True)
class MatchOptions:
    """How strictly a result must match the gold result.

    Attributes:
        ordered: compare row order; None means "when the gold SQL has a top-level ORDER BY".
        column_order: ``"any"`` (columns may come in any order) or ``"strict"``.
        column_names: ``"ignore"`` or ``"match"`` (case-insensitive names must be equal).
        rel_tol: relative tolerance for numbers.
        abs_tol: absolute tolerance for numbers.
    """

    ordered: bool | None = None
    column_order: Literal["any", "strict"] = "any"
    column_names: Literal["ignore", "match"] = "ignore"
    rel_tol: float = 1e-9
    abs_tol: float = 1e-6

    def __post_init__(self) -> None:
        if self.column_order not in ("any", "strict"):
            raise ValueError(f"column_order must be 'any' or 'strict', got {self.column_order!r}")
        if self.column_names not in ("ignore", "match"):
            raise ValueError(f"column_names must be 'ignore' or 'match', got {self.column_names!r}")
        if self.rel_tol < 0 or self.abs_tol < 0:
            raise ValueError("numeric tolerances must be non-negative")


@dataclass(frozen=True)
class ResultComparison:
    """The verdict and, when it fails, what differs in words."""

    match: bool
    feedback: str


_STRING_OR_COMMENT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)


def orders_result(sql: str) -> bool:
    """Whether ``sql`` has an ORDER BY at the top level (not inside a subquery or window)."""
    text = _STRING_OR_COMMENT.sub(" ", sql)
    depth = 0
    for match in re.finditer(r"\(|\)|\border\s+by\b", text, re.IGNORECASE):
        token = match.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            return True
    return False


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an int past float range (10**400) is compared as it is, not as a number
            return None
    return None


def values_equal(expected: Any, got: Any, options: MatchOptions) -> bool:
    """NULL-aware, tolerance-aware equality of two cells."""
    expected, got = normalise_value(expected), normalise_value(got)
    if expected is None or got is None:
        return expected is None and got is None
    first, second = _number(expected), _number(got)
    if first is not None and second is not None:
        if math.isnan(first) or math.isnan(second):
            return math.isnan(first) and math.isnan(second)
        return math.isclose(first, second, rel_tol=options.rel_tol, abs_tol=options.abs_tol)
    if (first is None) != (second is None):
        return False
    return bool(expected == got)


def _sort_key(value: Any) -> tuple[int, Any]:
    value = normalise_value(value)
    if value is None:
        return (0, 0)
    number = _number(value)
    if number is not None:
        return (1, 0.0 if math.isnan(number) else round(number, 5))
    if isinstance(value, bytes):
        return (3, value)
    return (2, str(value))


def _row_key(row: Sequence[Any]) -> tuple[tuple[int, Any], ...]:
    return tuple(_sort_key(value) for value in row)


def _rows_equal(expected: Sequence[Any], got: Sequence[Any], options: MatchOptions) -> bool:
    return all(values_equal(a, b, options) for a, b in zip(expected, got, strict=True))


def _render_row(row: Sequence[Any]) -> str:
    parts = []
    for value in row:
        value = normalise_value(value)
        parts.append("NULL" if value is None else repr(value))
    text = "(" + ", ".join(parts) + ")"
    return text if len(text) <= 120 else text[:117] + "...)"


def _multiset_difference(
    expected: list[tuple[Any, ...]], got: list[tuple[Any, ...]], options: MatchOptions
) -> tuple[list[Any], list[Any]]:
    """Rows of ``expected`` not matched in ``got`` and rows of ``got`` left over (multiset semantics)."""
    buckets: dict[Any, list[tuple[Any, ...]]] = {}
    for row in got:
        buckets.setdefault(_row_key(row), []).append(row)
    unmatched_expected = []
    for row in expected:
        bucket = buckets.get(_row_key(row))
        if bucket:
            for index, candidate in enumerate(bucket):
                if _rows_equal(row, candidate, options):
                    del bucket[index]
                    break
            else:
                unmatched_expected.append(row)
        else:
            unmatched_expected.append(row)
    remaining = [row for bucket in buckets.values() for row in bucket]
    # Rows whose rounded keys differ may still be equal within the tolerance; pair them up (bounded).
    missing = []
    for row in unmatched_expected:
        if len(remaining) <= 2000:
            for index, candidate in enumerate(remaining):
                if _rows_equal(row, candidate, options):
                    del remaining[index]
                    break
            else:
                missing.append(row)
        else:
            missing.append(row)
    return missing, remaining


def _same_multiset(expected: list[tuple[Any, ...]], got: list[tuple[Any, ...]], options: MatchOptions) -> bool:
    if len(expected) != len(got):
        return False
    left, right = sorted(expected, key=_row_key), sorted(got, key=_row_key)
    if all(_rows_equal(a, b, options) for a, b in zip(left, right, strict=True)):
        return True
    missing, extra = _multiset_difference(expected, got, options)  # sort keys disagree near a tolerance edge
    return not missing and not extra


def _column_permutations(
    expected_columns: Sequence[str],
    got_columns: Sequence[str],
    expected: list[tuple[Any, ...]],
    got: list[tuple[Any, ...]],
    options: MatchOptions,
) -> list[tuple[int, ...]]:
    """Candidate mappings (expected column i -> got column p[i]), most plausible first."""
    width = len(expected_columns)
    identity = tuple(range(width))
    if options.column_order == "strict":
        return [identity]
    lowered = [name.lower() for name in got_columns]
    by_name = [lowered.index(name.lower()) if name.lower() in lowered else -1 for name in expected_columns]
    candidates = [identity]
    if -1 not in by_name and len(set(by_name)) == width:
        candidates.insert(0, tuple(by_name))

    def signature(rows: list[tuple[Any, ...]], index: int) -> list[tuple[int, Any]]:
        return sorted(_sort_key(row[index]) for row in rows)

    expected_signatures = [signature(expected, index) for index in range(width)]
    got_signatures = [signature(got, index) for index in range(width)]
    options_per_column = [
        [index for index in range(width) if got_signatures[index] == expected_signatures[column]] or list(range(width))
        for column in range(width)
    ]
    for count, mapping in enumerate(itertools.product(*options_per_column)):
        if count >= 200:
            break
        if len(set(mapping)) == width and mapping not in candidates:
            candidates.append(tuple(mapping))
    return candidates


def compare_results(
    expected_columns: Sequence[str],
    expected_rows: Sequence[Sequence[Any]],
    got_columns: Sequence[str],
    got_rows: Sequence[Sequence[Any]],
    *,
    options: MatchOptions | None = None,
    ordered: bool = False,
) -> ResultComparison:
    """Compare a result with the expected one; the feedback names the first difference found."""
    options = options or MatchOptions()
    expected = [tuple(row) for row in expected_rows]
    got = [tuple(row) for row in got_rows]
    if len(got_columns) != len(expected_columns):
        extra = "more" if len(got_columns) > len(expected_columns) else "fewer"
        return ResultComparison(
            False,
            f"expected {len(expected_columns)} column{'s' if len(expected_columns) != 1 else ''} "
            f"({', '.join(expected_columns)}), got {len(got_columns)} ({', '.join(got_columns)}): {extra} columns "
            "than asked for",
        )
    if options.column_names == "match":
        expected_names = [name.lower() for name in expected_columns]
        got_names = [name.lower() for name in got_columns]
        if sorted(expected_names) != sorted(got_names) or (
            options.column_order == "strict" and expected_names != got_names
        ):
            return ResultComparison(
                False, f"expected columns named ({', '.join(expected_columns)}), got ({', '.join(got_columns)})"
            )
    if len(got) != len(expected):
        missing, extra_rows = _multiset_difference(expected, got, options)
        detail = _examples(missing, extra_rows)
        return ResultComparison(False, f"expected {len(expected)} rows, got {len(got)}{detail}")
    mappings = _column_permutations(expected_columns, got_columns, expected, got, options) if expected_columns else [()]
    best_missing: tuple[list[Any], list[Any]] | None = None
    for mapping in mappings:
        reordered = [tuple(row[index] for index in mapping) for row in got]
        if ordered:
            if all(_rows_equal(a, b, options) for a, b in zip(expected, reordered, strict=True)):
                return ResultComparison(True, "the result matches the expected result, in the expected order")
            if _same_multiset(expected, reordered, options):
                position = next(
                    index
                    for index, (a, b) in enumerate(zip(expected, reordered, strict=True))
                    if not _rows_equal(a, b, options)
                )
                return ResultComparison(
                    False,
                    f"the rows are right but in the wrong order: the question asks for an ordered result; "
                    f"row {position + 1} should be {_render_row(expected[position])}, got "
                    f"{_render_row(reordered[position])}",
                )
        elif _same_multiset(expected, reordered, options):
            return ResultComparison(True, "the result matches the expected result (as a multiset of rows)")
        if best_missing is None:
            best_missing = _multiset_difference(expected, reordered, options)
    missing, extra_rows = best_missing or ([], [])
    return ResultComparison(False, f"the values differ from the expected result{_examples(missing, extra_rows) or ''}")


def _examples(missing: list[Any], extra: list[Any]) -> str:
    parts = []
    if missing:
        shown = "; ".join(_render_row(row) for row in missing[:3])
        parts.append(f"missing {len(missing)} expected row{'s' if len(missing) != 1 else ''}, e.g. {shown}")
    if extra:
        shown = "; ".join(_render_row(row) for row in extra[:3])
        parts.append(f"{len(extra)} unexpected row{'s' if len(extra) != 1 else ''}, e.g. {shown}")
    return (": " + "; ".join(parts)) if parts else ""
