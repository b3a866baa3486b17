"""Read exact rational numbers out of normalised answer text (see :mod:`._latex`).

A number is an ``int`` or a :class:`fractions.Fraction`, never a float, so ``0.1 + 0.2`` style rounding
cannot make a right answer wrong. Understood forms: ``-12``, ``1,234.5``, ``.5``, ``1e3``,
``2.5E-2``, ``3 * 10^{5}``, ``2^{10}``, ``3/4``, ``(3)/(4)``, the mixed number ``2 1/2``,
``$5``, ``25%`` and trailing unit words. Numbers with more than :data:`MAX_DIGITS` digits or
exponents beyond :data:`MAX_EXPONENT` are refused rather than computed, so a huge adversarial
number costs nothing.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "Number",
    "NumberToken",
    "find_numbers",
    "first_number",
    "format_number",
    "last_number",
    "read_single_number",
]

Number = int | Fraction

MAX_DIGITS = 400
MAX_EXPONENT = 400

_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_TOKEN = re.compile(
    rf"""
    (?<![\w.^/])                                   # not inside a word, a decimal, a power or a fraction
    (?P<sign>[-+])?\s?
    (?:[$€£¥]\s?)?
    (?:(?P<whole>\d+)\s+(?=\(?\d+\)?\s*/\s*\(?\d))?  # the whole part of a mixed number: 2 1/2
    \(?(?P<number>{_UNSIGNED})\)?
    (?:[eE](?P<exponent>[-+]?\d+))?
    (?:\s*\^\s*\{{?\s*(?P<power>[-+]?\d+)\s*\}}?)?
    (?:\s*/\s*\(?(?P<denominator>{_UNSIGNED})\)?(?![\d.]))?
    (?:\s*\*\s*10\s*\^\s*\{{?\s*(?P<scale>[-+]?\d+)\s*\}}?)?
    (?P<percent>\s*%)?
    """,
    re.VERBOSE,
)


class NumberTooLarge(ValueError):
    """A number whose digits or exponent exceed the limits; it is refused, not computed."""


class NumberToken(NamedTuple):
    """One number found in text: its exact value, where it is, and whether it carried ``%``."""

    value: Number
    start: int
    end: int
    percent: bool = False

    @property
    def alternatives(self) -> tuple[Number, ...]:
        """Values a grader may accept: ``25%`` stands for 25 or for 0.25."""
        return (self.value, Fraction(self.value, 100)) if self.percent else (self.value,)


def _digits(text: str) -> Number:
    """``"1,234"`` -> 1234 (an int), ``"2.50"`` -> Fraction(5, 2); refuses too many digits."""
    cleaned = text.replace(",", "") if "," in text else text
    if len(cleaned) > MAX_DIGITS + 1:
        raise NumberTooLarge(f"a number with more than {MAX_DIGITS} digits")
    whole, dot, decimals = cleaned.partition(".")
    if not dot:
        return int(whole)
    return Fraction(int(whole or "0") * 10 ** len(decimals) + int(decimals), 10 ** len(decimals))


def _power(base: Number, exponent_text: str) -> Number:
    exponent = int(exponent_text)
    if abs(exponent) > MAX_EXPONENT:
        raise NumberTooLarge(f"an exponent of {exponent} (the limit is {MAX_EXPONENT})")
    if exponent < 0:
        return Fraction(base) ** exponent if base else Fraction(0)
    return base**exponent


def _token_value(match: re.Match[str]) -> NumberToken:
    sign, whole, number, exponent, power, denominator_text, scale, percent = match.group(
        "sign", "whole", "number", "exponent", "power", "denominator", "scale", "percent"
    )
    value = _digits(number)
    if exponent:
        value *= _power(10, exponent)
    if power:
        value = _power(value, power)
    if denominator_text:
        denominator = _digits(denominator_text)
        if denominator == 0:
            raise ZeroDivisionError("a fraction with denominator 0")
        value = Fraction(value) / denominator
    if whole:
        value += _digits(whole)
    if scale:
        value *= _power(10, scale)
    if sign == "-":
        value = -value
    if type(value) is not int and value.denominator == 1:
        value = value.numerator
    return NumberToken(value, match.start(), match.end(), percent is not None)


def find_numbers(text: str) -> tuple[list[NumberToken], str | None]:
    """Every number in ``text`` in order, and a note on any that were refused (too large, /0)."""
    tokens: list[NumberToken] = []
    problem = None
    for match in _TOKEN.finditer(text):
        try:
            tokens.append(_token_value(match))
        except (NumberTooLarge, ZeroDivisionError) as error:
            problem = f"refused {error}: {match.group(0).strip()[:40]}"
    return tokens, problem


def _one(match: re.Match[str] | None) -> tuple[NumberToken | None, str | None]:
    if match is None:
        return None, None
    try:
        return _token_value(match), None
    except (NumberTooLarge, ZeroDivisionError) as error:
        return None, f"refused {error}: {match.group(0).strip()[:40]}"


def first_number(text: str) -> tuple[NumberToken | None, str | None]:
    """The first number in ``text`` (None when there is none) and a note when it was refused."""
    return _one(_TOKEN.search(text))


def last_number(text: str) -> tuple[NumberToken | None, str | None]:
    """The last number in ``text`` (None when there is none) and a note when it was refused."""
    last = None
    for last in _TOKEN.finditer(text):  # noqa: B007 - only the last match is read
        pass
    return _one(last)


_ASSIGNMENT = re.compile(r"^\s*[A-Za-z][A-Za-z0-9_]*\s*=(?!=)")
_EXPRESSION_MARKS = re.compile(r"[\\^_+*/=()\[\]{}|<>]|\d|(?<![A-Za-z])[A-Za-z](?![A-Za-z])")


def read_single_number(text: str) -> tuple[NumberToken | None, str | None]:
    """Read ``text`` as exactly one number with optional currency, ``%`` and unit words.

    ``"x = 18 dollars"`` reads as 18; ``"3, 4"``, ``"2\\pi"``, ``"5x"`` and ``"1+1"`` are not one
    number and give ``(None, reason)``.
    """
    body = _ASSIGNMENT.sub("", text, count=1)
    tokens, problem = find_numbers(body)
    if problem is not None and not tokens:
        return None, problem
    if len(tokens) != 1:
        return None, ("no number" if not tokens else f"{len(tokens)} numbers where one was expected")
    token = tokens[0]
    rest = body[: token.start] + " " + body[token.end :]
    if _EXPRESSION_MARKS.search(rest):
        return None, "an expression, not a single number"
    return token, None


def format_number(value: Number) -> str:
    """A canonical spelling: ``42``, ``-2.5``, ``1/3`` (a terminating decimal when there is one)."""
    if type(value) is int:
        return str(value)
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    scaled = value * 10**places
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"
