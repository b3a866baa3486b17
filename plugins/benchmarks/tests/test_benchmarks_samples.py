"""The shipped sample sets are product: every answer is recomputed here, every GSM8K step checked."""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
from collections.abc import Callable
from fractions import Fraction

import pytest
from rolloutgym_benchmarks import aime_examples, grade_aime, grade_gsm8k, gsm8k_examples

_NOTE = re.compile(r"<<([^=<>]+)=([^<>]+)>>")
_OPERATORS: dict[type, Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> Fraction:
    """Exact arithmetic on + - * / and parentheses only."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(str(node.value))
    raise AssertionError(f"unexpected syntax in a calculator note: {ast.dump(node)}")


def test_gsm8k_sample_shape() -> None:
    examples = gsm8k_examples()
    assert len(examples) >= 30
    assert len({example.example_id for example in examples}) == len(examples)
    assert {example.split for example in examples} == {"train", "test"}
    questions = [example.question for example in examples]
    assert len(set(questions)) == len(questions)


@pytest.mark.parametrize("example", gsm8k_examples(), ids=lambda example: example.example_id)
def test_gsm8k_sample_arithmetic(example) -> None:
    notes = _NOTE.findall(example.answer)
    assert notes, "every sample solution shows its computations as <<expression=result>>"
    for expression, result in notes:
        assert _evaluate(ast.parse(expression, mode="eval")) == Fraction(result), (
            f"{example.example_id}: {expression} != {result}"
        )
    final = example.answer.rsplit("####", 1)[1].strip()
    assert Fraction(notes[-1][1]) == Fraction(final), (
        f"{example.example_id}: #### {final} is not the last computed value"
    )
    assert grade_gsm8k(f"#### {final}", example.answer).value == 1.0


def _divisor_count(number: int) -> int:
    return sum(1 for divisor in range(1, number + 1) if number % divisor == 0)


def _fibonacci(index: int) -> int:
    first, second = 1, 1
    for _ in range(index - 1):
        first, second = second, first + second
    return first


def _trailing_zeros(number: int) -> int:
    return sum(number // 5**power for power in range(1, 12))


def _largest_prime_factor(number: int) -> int:
    factor, largest = 2, 1
    while factor * factor <= number:
        while number % factor == 0:
            largest, number = factor, number // factor
        factor += 1
    return max(largest, number)


def _heron(a: int, b: int, c: int) -> int:
    half = Fraction(a + b + c, 2)
    squared = half * (half - a) * (half - b) * (half - c)
    root = math.isqrt(int(squared))
    assert root * root == squared
    return root


def _sequence_term() -> int:
    term = 1
    for index in range(1, 30):
        term += 2 * index
    return term


# Independent computations of every shipped AIME-style answer, by example id.
AIME_CHECKS: dict[str, Callable[[], int]] = {
    "aime-sample-01": lambda: _divisor_count(2**4 * 3**3 * 5**2),
    "aime-sample-02": lambda: pow(3, 100, 1000),
    "aime-sample-03": lambda: sum(1 for n in range(1, 1001) if (n % 3 == 0 or n % 5 == 0) and n % 7 != 0),
    "aime-sample-04": lambda: sum(n for n in range(1, 60) if (n * n + 1) % 5 == 0),
    "aime-sample-05": lambda: sum(
        1 for size in range(13) for subset in itertools.combinations(range(1, 13), size) if sum(subset) == 30
    ),
    "aime-sample-06": lambda: sum(int(digit) for digit in str(2**50)),
    "aime-sample-07": lambda: next(n for n in itertools.count(1) if _trailing_zeros(n) >= 50),
    "aime-sample-08": lambda: sum(1 for x in range(-10, 11) for y in range(-10, 11) if x * x + y * y <= 100),
    "aime-sample-09": lambda: _fibonacci(100) % 1000,
    "aime-sample-10": lambda: sum(1 for n in range(1, 1001) if math.gcd(n, 1000) == 1),
    "aime-sample-11": _sequence_term,
    "aime-sample-12": lambda: sum(
        1 for a in range(1, 31) for b in range(a, 31) for c in range(b, 31) if 30 - a - b - c >= c
    ),
    "aime-sample-13": lambda: _heron(13, 14, 15),
    "aime-sample-14": lambda: _largest_prime_factor(999_999),
    "aime-sample-15": lambda: sum(1 for n in range(1000, 10000) if sum(map(int, str(n))) == 9),
    "aime-sample-16": lambda: sum(n for n in range(10, 100) if (n // 10) % 2 == 1 and n % 2 == 1) % 1000,
    "aime-sample-17": lambda: pow(7, 2026, 100),
}


def test_aime_sample_shape() -> None:
    examples = aime_examples()
    assert len(examples) >= 15
    assert {example.example_id for example in examples} == set(AIME_CHECKS)


@pytest.mark.parametrize("example", aime_examples(), ids=lambda example: example.example_id)
def test_aime_sample_answer_is_computed(example) -> None:
    answer = int(example.answer)
    assert 0 <= answer <= 999
    assert AIME_CHECKS[example.example_id]() == answer
    assert grade_aime(rf"\boxed{{{answer:03d}}}", example.answer).value == 1.0
