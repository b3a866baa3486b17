"""Exact, bounded evaluation of the small arithmetic a model writes as its answer.

``2 * 56``, ``(2+3) * 4``, ``2^3 * 5``, ``6 / 2``, ``\\sqrt{16}`` (a perfect square only) and
number words (``twelve``, ``twenty-five``, ``one hundred and five``, ``a dozen``). Values are
``int`` or :class:`fractions.Fraction`; no ``eval``, no floats. Inputs longer than
:data:`MAX_EXPRESSION_CHARS`, exponents beyond ``MAX_EXPONENT`` and intermediate numbers with
more than ``MAX_DIGITS`` digits are refused (``None``), so a hostile answer costs nothing.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ._numbers import MAX_DIGITS, MAX_EXPONENT, Number

__all__ = ["MAX_EXPRESSION_CHARS", "evaluate_arithmetic", "read_number_words"]

MAX_EXPRESSION_CHARS = 200
_ARITHMETIC = re.compile(r"^[\d\s.,+\-*/^(){}]+$")
_LEXEME = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d+)?|\.\d+)|(?P<operator>[-+*/^(){}]))")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}|\\sqrt\s*(\d+)")


class _Refused(Exception):
    pass


def _check(value: Number) -> Number:
    size = abs(value.numerator if isinstance(value, Fraction) else value)
    if size.bit_length() > MAX_DIGITS * 4:
        raise _Refused
    if isinstance(value, Fraction) and value.denominator.bit_length() > MAX_DIGITS * 4:
        raise _Refused
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


class _Parser:
    """Recursive descent over ``expr := term (+|- term)*``, ``term := unary (*|/ unary)*``,
    ``unary := -unary | power``, ``power := atom (^ unary)?``, ``atom := number | (expr) | {expr}``."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        position = 0
        while position < len(text):
            match = _LEXEME.match(text, position)
            if match is None:
                if text[position:].strip():
                    raise _Refused
                break
            self.tokens.append(match.group("number") or match.group("operator"))
            position = match.end()
        self.index = 0

    def peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Refused
        self.index += 1
        return token

    def expression(self) -> Number:
        value = self.term()
        while self.peek() in ("+", "-"):
            operator = self.take()
            other = self.term()
            value = _check(value + other if operator == "+" else value - other)
        return value

    def term(self) -> Number:
        value = self.unary()
        while self.peek() in ("*", "/"):
            operator = self.take()
            other = self.unary()
            if operator == "*":
                value = _check(value * other)
            else:
                if other == 0:
                    raise _Refused
                value = _check(Fraction(value) / other)
        return value

    def unary(self) -> Number:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Number:
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exponent = self.unary()
            if not isinstance(exponent, int) or abs(exponent) > MAX_EXPONENT:
                raise _Refused
            if exponent < 0:
                if base == 0:
                    raise _Refused
                return _check(Fraction(base) ** exponent)
            if abs(base) > 1 and exponent * max(abs(base).bit_length(), 1) > MAX_DIGITS * 4:
                raise _Refused
            return _check(base**exponent)
        return base

    def atom(self) -> Number:
        token = self.take()
        if token in ("(", "{"):
            value = self.expression()
            if self.take() != (")" if token == "(" else "}"):
                raise _Refused
            return value
        if token[0].isdigit() or token[0] == ".":
            if len(token) > MAX_DIGITS:
                raise _Refused
            whole, dot, decimals = token.partition(".")
            if not dot:
                return int(whole)
            return _check(Fraction(int(whole or "0") * 10 ** len(decimals) + int(decimals), 10 ** len(decimals)))
        raise _Refused


def _square_root(match: re.Match[str]) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    if not _ARITHMETIC.match(inner) or "," in inner:
        raise _Refused
    parser = _Parser(inner)
    value = parser.expression()
    if parser.peek() is not None or value < 0:
        raise _Refused
    value = Fraction(value)
    top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
    if top * top != value.numerator or bottom * bottom != value.denominator:
        raise _Refused  # an irrational root is not a number we compare exactly
    return f"({top}/{bottom})"


def evaluate_arithmetic(text: str) -> Number | None:
    """The exact value of a small arithmetic expression, or None when ``text`` is not one.

    At least one operator must be present (a bare number is read elsewhere); thousands
    commas are only accepted in the ``1,234`` form.
    """
    if len(text) > MAX_EXPRESSION_CHARS:
        return None
    try:
        if "\\sqrt" in text:
            text = _SQRT.sub(_square_root, text)
        if not _ARITHMETIC.match(text):
            return None
        if "," in text:
            if re.search(r"\d,(?!\d{3}(?!\d))", text):
                return None  # "16, 18" is a list, not a number
            text = text.replace(",", "")
        parser = _Parser(text)
        if len(parser.tokens) < 2:
            return None
        value = parser.expression()
        if parser.peek() is not None:
            return None
        return value
    except (_Refused, RecursionError, ValueError, ZeroDivisionError, OverflowError):
        return None


_UNITS = {
    word: index
    for index, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * index
    for index, word in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
    if word != "_"
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD = re.compile(r"[a-z]+")


def read_number_words(text: str) -> int | None:
    """``"twenty-five"`` -> 25, ``"one hundred and five"`` -> 105, ``"a dozen"`` -> 12; None otherwise.

    The whole text (apart from surrounding punctuation and a trailing unit word or two) must be
    number words.
    """
    words = _WORD.findall(text.lower().replace("-", " "))
    if not words or len(words) > 12:
        return None
    if words[:2] in (["a", "dozen"], ["one", "dozen"]):
        return 12 if len(words) <= 3 else None
    total = current = 0
    seen = consumed = 0
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        elif word == "and" and seen:
            consumed += 1
            continue
        else:
            break  # a unit word ends the number ("twelve apples")
        seen += 1
        consumed += 1
    if not seen or len(words) - consumed > 2:
        return None
    return total + current
