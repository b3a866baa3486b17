"""Find the final answer in a model's response: the rule chain behind ``extract_*_answer``.

Rules, the first that finds something wins:

1. ``\\boxed{...}`` / ``\\fbox{...}`` (brace-balanced; the last one by default, or the first);
2. ``#### ...`` (the last such line);
3. "the answer is ...", "final answer: ..." (the last such phrase);
4. the last bold ``**...**`` that holds a number;
5. the last number anywhere.

An unclosed final ``\\boxed{`` (a response cut off mid-answer) and more than
``max_boxed_answers`` different boxed values (hedging) give no answer, with the reason.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ._latex import find_closing_brace, normalize_latex
from ._numbers import NumberToken, find_numbers, first_number, format_number, last_number, read_single_number

__all__ = ["DEFAULT_MAX_BOXED_ANSWERS", "EXPLICIT_RULES", "BoxedChoice", "Extraction", "extract_answer"]

BoxedChoice = Literal["first", "last"]
DEFAULT_MAX_BOXED_ANSWERS = 3
EXPLICIT_RULES = frozenset({"boxed", "####", "answer_is", "bold"})

_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_PHRASE = re.compile(r"(?i)answer\s*(?:is\b|:|=)\s*:?")
_DIGIT = re.compile(r"\d")
_BOLD = re.compile(r"\*\*([^*\n]{1,300})\*\*")
_SENTENCE_END = re.compile(r"(?<!\d)\.(?!\d)|\.(?=\s|$)")
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


def _from_segment(segment: str, rule: str) -> Extraction | None:
    """The first number in ``segment``, else its text; None when it holds nothing."""
    normalized = normalize_latex(segment).strip()
    token, problem = first_number(normalized)
    if token is not None:
        return Extraction(normalized[token.start : token.end].strip(), token, rule)
    if problem:
        return Extraction(None, None, rule, problem)
    cleaned = normalized.strip(" .!?;:*")
    return Extraction(cleaned, None, rule) if cleaned else None


def _from_boxed(text: str, boxed: BoxedChoice, max_boxed_answers: int | None) -> Extraction | None:
    contents = _boxed_contents(text)
    if not contents:
        return None
    non_empty = [content for content in contents if content is None or content.strip()]
    if not non_empty:
        return Extraction(None, None, "boxed", "every \\boxed{} is empty")
    chosen = non_empty[-1] if boxed == "last" else non_empty[0]
    if chosen is None:
        return Extraction(None, None, "boxed", "the \\boxed{ is never closed (was the response cut off?)")
    distinct: set[str] = set()
    if max_boxed_answers is not None and len(non_empty) > max_boxed_answers:
        distinct = {normalize_latex(content).strip() for content in non_empty if content is not None}
    if max_boxed_answers is not None and len(distinct) > max_boxed_answers:
        return Extraction(
            None,
            None,
            "boxed",
            f"{len(distinct)} different \\boxed{{}} answers (at most {max_boxed_answers}); box one final answer",
        )
    normalized = normalize_latex(chosen).strip()
    token, problem = read_single_number(normalized)
    if token is not None:
        return Extraction(normalized, token, "boxed")
    if problem and problem.startswith("refused"):
        return Extraction(None, None, "boxed", problem)
    return Extraction(normalized, None, "boxed")


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
