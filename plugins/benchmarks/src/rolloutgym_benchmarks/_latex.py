"""Rewrite the LaTeX and Unicode of a model's answer into plain text that numbers can be read from.

``\\dfrac{1}{2}`` becomes ``1/2``, ``3\\,000`` and ``3{,}000`` become ``3000`` and ``3,000``,
``\\text{ dollars}`` becomes `` dollars ``, ``3 \\times 10^{5}`` becomes ``3 * 10^{5}``.
Everything runs in time linear in the input, so an adversarially long answer stays cheap.
"""

from __future__ import annotations

import re

__all__ = ["find_closing_brace", "normalize_latex", "unwrap_command"]

_FRAC_ALIASES = re.compile(r"\\(?:dfrac|tfrac|cfrac)(?![A-Za-z])")
_WRAPPERS = ("text", "textbf", "textit", "textrm", "mathrm", "mathbf", "mathit", "mbox", "operatorname", "boldsymbol")
_WRAPPER_START = re.compile(r"\\(" + "|".join(_WRAPPERS) + r")\s*\{")
_DROPPED = re.compile(
    r"\\left(?![A-Za-z])|\\right(?![A-Za-z])|\\displaystyle|\\!|\\,|\\;|\\:|\\ |\\quad|\\qquad|~|\\\$|\$"
    r"|\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°"
)
_BRACED_COMMA = re.compile(r"\{,\}")
_PERCENT = re.compile(r"\\%")
_TIMES = re.compile(r"\\times|\\cdot|×|·")
_DIVIDE = re.compile(r"\\div(?![A-Za-z])|÷")
_SPACE_IN_NUMBER = re.compile(r"(?<=\d)[\u00a0\u2009\u202f\u2007](?=\d{3})")
_UNICODE_SPACES = re.compile(r"[\u00a0\u2009\u202f\u2007\u2002\u2003]")
_NEEDS_WORK = re.compile(r"[\\{$~\u0080-\U0010ffff]|\^\s*\\circ")
_SIMPLE_NUMBER = re.compile(r"^\s*[-+]?(?:\d[\d,]*)?(?:\.\d+)?\s*$")


def find_closing_brace(text: str, open_index: int) -> int:
    """Index of the ``}`` that closes the ``{`` at ``open_index``; -1 when it is never closed."""
    close = text.find("}", open_index + 1)
    if close >= 0 and "{" not in text[open_index + 1 : close] and text[close - 1] != "\\":
        return close  # the common case: nothing nested
    depth = 0
    index = open_index
    length = len(text)
    while index < length:
        character = text[index]
        if character == "\\":
            index += 2  # an escaped brace such as \{ does not count
            continue
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def unwrap_command(text: str, pattern: re.Pattern[str]) -> str:
    """Replace every ``\\command{X}`` matched by ``pattern`` (which ends at ``{``) with `` X ``."""
    if "\\" not in text:
        return text
    pieces: list[str] = []
    position = 0
    while True:
        match = pattern.search(text, position)
        if match is None:
            break
        close = find_closing_brace(text, match.end() - 1)
        if close < 0:
            break
        pieces.append(text[position : match.start()])
        pieces.append(" " + text[match.end() : close] + " ")
        position = close + 1
    pieces.append(text[position:])
    return "".join(pieces)


def _read_argument(text: str, index: int) -> tuple[str, int] | None:
    """Read one LaTeX argument at ``index``: ``{...}`` or a single character; returns (body, next index)."""
    length = len(text)
    while index < length and text[index] == " ":
        index += 1
    if index >= length:
        return None
    if text[index] == "{":
        close = find_closing_brace(text, index)
        if close < 0:
            return None
        return text[index + 1 : close], close + 1
    if text[index] in "}\\":
        return None
    return text[index], index + 1


def _replace_fractions(text: str) -> str:
    """``\\frac{A}{B}`` -> ``A/B`` (or ``(A)/(B)`` for compound parts), innermost parts first."""
    if "\\frac" not in text:
        return text
    pieces: list[str] = []
    position = 0
    while True:
        start = text.find("\\frac", position)
        if start < 0:
            break
        numerator = _read_argument(text, start + 5)
        denominator = _read_argument(text, numerator[1]) if numerator else None
        if numerator is None or denominator is None:
            pieces.append(text[position : start + 5])
            position = start + 5
            continue
        top, bottom = _replace_fractions(numerator[0]).strip(), _replace_fractions(denominator[0]).strip()
        top = top if _SIMPLE_NUMBER.match(top) else f"({top})"
        bottom = bottom if _SIMPLE_NUMBER.match(bottom) else f"({bottom})"
        before = text[position:start]
        # 2\frac{1}{2} is the mixed number two and a half: keep a space between the parts.
        separator = " " if before[-1:].isdigit() else ""
        pieces.append(f"{before}{separator}{top}/{bottom}")
        position = denominator[1]
    pieces.append(text[position:])
    return "".join(pieces)


def normalize_latex(text: str) -> str:
    """Plain text with numbers readable: fractions as ``a/b``, no spacing macros, no ``$``, ``\\text`` unwrapped."""
    if not text:
        return ""
    if _NEEDS_WORK.search(text) is None:
        return text
    text = text.replace("\u2212", "-").replace("\u2013", "-")
    text = _SPACE_IN_NUMBER.sub("", text)
    text = _UNICODE_SPACES.sub(" ", text)
    if "\\" in text:
        text = _FRAC_ALIASES.sub(r"\\frac", text)
        text = unwrap_command(text, _WRAPPER_START)
        text = _PERCENT.sub("%", text)
    text = _BRACED_COMMA.sub(",", text)
    text = _DROPPED.sub("", text)
    text = _TIMES.sub(" * ", text)
    if "\\div" in text or "÷" in text:
        text = _DIVIDE.sub(" / ", text)
    return _replace_fractions(text)
