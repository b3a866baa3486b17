"""Find the final answer in a model's response: the rule chain behind ``extract_*_answer``.

Rules, the first that finds something wins:

1. ``\\boxed{...}`` / ``\\fbox{...}`` (brace-balanced; the last one by default, or the first);
2. ``#### ...`` (the last such line);
3. "the answer is ...", "final answer: ..." (the last such phrase);
4. the last bold ``**...**`` that holds a number;
5. the last number anywhere.

Empty boxes are skipped (an empty ``\\boxed{}`` followed by "The answer is 18." reads 18). An
unclosed final ``\\boxed{`` (a response cut off mid-answer), more than ``max_boxed_answers``
different boxed values (by default more than one: ``\\boxed{16} or \\boxed{18}`` is a hedge)
and "the answer is 16 or 18" give no answer, with the reason.

A boxed value or answer phrase is read as: redundant braces dropped (``{{310}}``), an answer
choice label dropped (``(C) 12``), the right-hand side of an equation (``m+n=37``,
``3 \\times 6 = 18``, ``x \\approx 3.5``), unit words and units with exponents dropped
(``24 \\text{ m}^2``), then one number, else small arithmetic evaluated exactly
(``2\\cdot 56`` is 112), else number words (``twenty-five``).
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ._arithmetic import evaluate_arithmetic, read_number_words
from ._latex import find_closing_brace, normalize_latex
from ._numbers import NumberToken, find_numbers, first_number, format_number, last_number, read_single_number

__all__ = ["DEFAULT_MAX_BOXED_ANSWERS", "EXPLICIT_RULES", "BoxedChoice", "Extraction", "extract_answer", "read_value"]

BoxedChoice = Literal["first", "last"]
DEFAULT_MAX_BOXED_ANSWERS = 1
EXPLICIT_RULES = frozenset({"boxed", "####", "answer_is", "bold"})

_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_PHRASE = re.compile(r"(?i)answer\s*(?:is\b|:|=)\s*:?")
_DIGIT = re.compile(r"\d")
_BOLD = re.compile(r"\*\*([^*\n]{1,300})\*\*")
_SENTENCE_END = re.compile(r"(?<!\d)\.(?!\d)|\.(?=\s|$)")
_RELATION = re.compile(r"=|\\approx(?![A-Za-z])|≈|\\simeq(?![A-Za-z])")
_CHOICE = re.compile(r"^\s*\(?[A-E]\)\s*(?=\S)")
_UNIT_WORDS = r"(?:mm|cm|dm|km|in|ft|yd|mi|inch(?:es)?|feet|foot|met(?:er|re)s?|units?|yards?|miles?|squares?)"
_UNIT_POWER = re.compile(
    rf"(\d)\s*(?:\s(?:m|{_UNIT_WORDS})|{_UNIT_WORDS})\s*(?:\^\s*\{{?\s*[23]\s*\}}?|[²³])(?![A-Za-z0-9])"
)
_OR = re.compile(r"(?i)(?<![A-Za-z])or(?![A-Za-z])")
_RULE_NAMES = {
    "boxed": "\\boxed{}",
    "####": "'####'",
    "answer_is": "'the answer is'",
    "bold": "bold text",
    "last_number": "the last number in the response",
}


class Extraction(NamedTuple):
    """What the rule chain found.

    Attributes:
        text: the answer as plain text (normalised LaTeX), or None when nothing was found.
        number: the answer read as one exact number, when it is one.
        rule: which rule found it (``boxed``, ``####``, ``answer_is``, ``bold``, ``last_number``).
        problem: why there is no answer (or why it is unusable), in words.
    """

    text: str | None = None
    number: NumberToken | None = None
    rule: str | None = None
    problem: str | None = None

    @property
    def found(self) -> bool:
        return self.text is not None

    @property
    def where(self) -> str:
        """The rule in words, for feedback."""
        return _RULE_NAMES.get(self.rule or "", "nowhere")


def _boxed_contents(text: str) -> list[str | None]:
    """Every boxed value in order; None marks a ``\\boxed{`` that is never closed."""
    contents: list[str | None] = []
    for match in _BOXED.finditer(text):
        index = match.end()
        while index < len(text) and text[index] == " ":
            index += 1
        if index < len(text) and text[index] == "{":
            close = find_closing_brace(text, index)
            contents.append(None if close < 0 else text[index + 1 : close])
        else:  # \boxed 5
            word = re.match(r"[^\s$]+", text[index:])
            if word:
                contents.append(word.group(0))
    return contents


def _strip_braces(text: str) -> str:
    """``{{310}}`` -> ``310``: drop braces that enclose the whole text."""
    for _ in range(8):  # bounded: a wall of braces costs a few linear scans, not one per brace
        if not (text.startswith("{") and find_closing_brace(text, 0) == len(text) - 1):
            break
        text = text[1:-1].strip()
    return text


def _single_value(text: str) -> NumberToken | None:
    """``text`` read as one number, one arithmetic expression or number words; else None."""
    token, _ = read_single_number(text)
    if token is not None:
        return token
    value = evaluate_arithmetic(text)
    if value is None and _DIGIT.search(text) is None:
        value = read_number_words(text)
    return None if value is None else NumberToken(value, 0, len(text))


def _right_hand_side(text: str) -> str | None:
    """The right-hand side of ``text`` when it is one chain of equations (``m+n=37``)."""
    parts = _RELATION.split(text)
    if len(parts) < 2 or not parts[-1].strip():
        return None
    if any("," in part or ";" in part for part in parts[:-1]):
        return None  # "x=2, y=3" is a system, not a chain
    return parts[-1].strip()


def read_value(normalized: str) -> tuple[str, NumberToken | None, str | None]:
    """Read a boxed value: (its text, its number or None, a refusal reason or None)."""
    text = _strip_braces(normalized.strip())
    if "^" in text or "²" in text or "³" in text:
        text = _UNIT_POWER.sub(r"\1", text)
    text = _CHOICE.sub("", text).strip()
    right = _right_hand_side(text)
    if right is not None:
        token = _single_value(right)
        if token is not None:
            return right, token, None
    token, problem = read_single_number(text)
    if token is not None:
        return text, token, None
    if problem and problem.startswith("refused"):
        return text, None, problem
    token = _single_value(text)
    return text, token, None


def _canonical(text: str, token: NumberToken | None) -> str:
    if token is not None:
        return format_number(token.value) + ("%" if token.percent else "")
    return " ".join(text.split()).casefold()


def _hedge(normalized: str) -> str | None:
    """A reason when ``normalized`` offers different numbers joined by "or"."""
    if _OR.search(normalized) is None:
        return None
    tokens, _ = find_numbers(normalized)
    values = {token.value for token in tokens}
    if len(values) > 1:
        shown = " or ".join(format_number(value) for value in sorted(values)[:3])
        return f"the answer is hedged over several values ({shown}); give one final answer"
    return None


def _from_segment(segment: str, rule: str) -> Extraction | None:
    """The value of an answer phrase: one value, an equation's right side, else its first number."""
    normalized = normalize_latex(segment).strip()
    hedge = _hedge(normalized)
    if hedge is not None:
        return Extraction(None, None, rule, hedge)
    cleaned = normalized.strip(" .!?;:*")
    if cleaned:
        text, token, problem = read_value(cleaned)
        if token is not None:
            return Extraction(text, token, rule)
        if problem:
            return Extraction(None, None, rule, problem)
    token, problem = first_number(normalized)
    if token is not None:
        return Extraction(normalized[token.start : token.end].strip(), token, rule)
    if problem:
        return Extraction(None, None, rule, problem)
    return Extraction(cleaned, None, rule) if cleaned else None


def _from_boxed(text: str, boxed: BoxedChoice, max_boxed_answers: int | None) -> Extraction | None:
    contents = _boxed_contents(text)
    if not contents:
        return None
    non_empty = [content for content in contents if content is None or _strip_braces(content.strip())]
    if not non_empty:
        return None  # only empty boxes: the later rules ("The answer is 18.") decide
    chosen = non_empty[-1] if boxed == "last" else non_empty[0]
    if chosen is None:
        return Extraction(None, None, "boxed", "the \\boxed{ is never closed (was the response cut off?)")
    values = {}
    for content in non_empty:
        if content is not None:
            read = read_value(normalize_latex(content))
            values.setdefault(_canonical(read[0], read[1]), read)
    if max_boxed_answers is not None and len(values) > max_boxed_answers:
        shown = ", ".join(list(values)[:4])
        return Extraction(
            None,
            None,
            "boxed",
            f"{len(values)} different \\boxed{{}} answers ({shown}); box exactly one final answer",
        )
    value_text, token, problem = read_value(normalize_latex(chosen))
    if problem is not None:
        return Extraction(None, None, "boxed", problem)
    if token is None:
        hedge = _hedge(value_text)
        if hedge is not None:
            return Extraction(None, None, "boxed", hedge)
    return Extraction(value_text, token, "boxed")


def _from_marker(text: str) -> Extraction | None:
    position = text.rfind("####")
    if position < 0:
        return None
    line = text[position + 4 :].split("\n", 1)[0]
    return _from_segment(line.lstrip("#"), "####")


def _from_phrase(text: str) -> Extraction | None:
    lowered = text.lower()
    end = len(lowered)
    while (position := lowered.rfind("answer", 0, end)) >= 0:
        end = position
        if position and lowered[position - 1].isalpha():
            continue  # "reanswer" is not the phrase
        match = _ANSWER_PHRASE.match(text, position)
        if match is None:
            continue
        line = text[match.end() :].split("\n", 1)[0]
        stop = _SENTENCE_END.search(line)
        found = _from_segment(line[: stop.start()] if stop else line, "answer_is")
        if found is not None:
            return found
    return None


def _from_bold(text: str) -> Extraction | None:
    if "**" not in text:
        return None
    for match in reversed(list(_BOLD.finditer(text))):
        normalized = normalize_latex(match.group(1))
        tokens, _ = find_numbers(normalized)
        if tokens:
            token = tokens[-1] if len(tokens) > 1 and _ANSWER_PHRASE.search(normalized) is None else tokens[0]
            return Extraction(normalized[token.start : token.end].strip(), token, "bold")
    return None


def extract_answer(
    response: str, *, boxed: BoxedChoice = "last", max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS
) -> Extraction:
    """Run the rule chain on ``response`` (see the module docstring)."""
    if boxed not in ("first", "last"):
        raise ValueError(f"boxed must be 'first' or 'last', got {boxed!r}")
    if not isinstance(response, str):
        return Extraction(problem=f"the response is a {type(response).__name__}, not text")
    if not response.strip():
        return Extraction(problem="the response is empty")
    if "boxed" in response or "fbox" in response:
        found = _from_boxed(response, boxed, max_boxed_answers)
        if found is not None:
            return found
    for rule in (_from_marker, _from_phrase, _from_bold):
        found = rule(response)
        if found is not None:
            return found
    return _from_last_number(response)


def _from_last_number(text: str) -> Extraction:
    """The last number, read line by line from the end (a long response costs only its tail)."""
    end = len(text)
    problem = None
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        end = start - 1
        if _DIGIT.search(line) is None:
            continue
        token, problem = last_number(normalize_latex(line))
        if token is not None:
            return Extraction(format_number(token.value), token, "last_number")
        if problem is not None:
            break
    return Extraction(problem=problem or "no number in the response")
