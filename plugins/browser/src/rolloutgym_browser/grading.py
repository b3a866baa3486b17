"""Grading: server-side state against the hidden ground truth, the answer, and errors.

* ``state``: the site's end state equals the expected one (a whole-state comparison,
  or only the given dotted paths); feedback lists every difference.
* ``answer``: the final answer matches. Numbers: the answer must contain exactly one
  distinct number and it must equal the expected one (``$12.50`` matches 12.5; listing
  several candidates fails). Text: equal after case folding and dropping punctuation
  and a leading article (``"the linen notebook."`` matches ``Linen Notebook``; a sentence
  around the name does not).
* ``no_errors``: no invalid actions (refused tool calls, links or paths to other sites)
  and no page errors (pages the agent opened that the site could not serve). Requests a
  page itself makes to other sites are blocked and reported, not held against the agent.

The reward is 0 unless every outcome check (state, answer) passes; then it is 1 without
errors and 0.5 with errors on the way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import Score

__all__ = ["answer_matches", "diff_values", "grade_episode", "lookup_path"]

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_MISSING = object()
ERROR_FACTOR = 0.5


def lookup_path(state: Any, path: str) -> Any:
    """``"account.email"``, ``"orders[0].total"``, ``"cart.length"`` in ``state``."""
    current = state
    for part in path.split("."):
        match = re.fullmatch(r"([^\[\]]*)((?:\[\d+\])*)", part)
        if match is None:
            return _MISSING
        key, indices = match.groups()
        if (
            key == "length"
            and isinstance(current, (list, dict, str))
            and not (isinstance(current, dict) and "length" in current)
        ):
            current = len(current)
        elif key:
            if not isinstance(current, Mapping) or key not in current:
                return _MISSING
            current = current[key]
        for index in re.findall(r"\[(\d+)\]", indices):
            if not isinstance(current, list) or int(index) >= len(current):
                return _MISSING
            current = current[int(index)]
    return current


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual or (type(expected) is type(actual) and expected == actual)
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(expected, actual, rel_tol=0, abs_tol=1e-9)
    return bool(expected == actual)


def diff_values(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Every difference between ``expected`` and ``actual`` as ``"path: expected X, found Y"``."""
    where = path or "state"
    if not path and expected == actual:  # the common case, checked at C speed
        return []
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        differences = []
        for key in expected:
            child = f"{path}.{key}" if path else str(key)
            differences.extend(diff_values(expected[key], actual.get(key, _MISSING), child))
        for key in actual:
            if key not in expected:
                child = f"{path}.{key}" if path else str(key)
                differences.append(f"{child}: expected nothing, found {_show(actual[key])}")
        return differences
    if isinstance(expected, list) and isinstance(actual, list):
        differences = []
        if len(expected) != len(actual):
            differences.append(f"{where}: expected {len(expected)} item(s), found {len(actual)}")
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            differences.extend(diff_values(left, right, f"{path}[{index}]"))
        for index in range(len(expected), len(actual)):
            differences.append(f"{path}[{index}]: unexpected {_show(actual[index])}")
        for index in range(len(actual), len(expected)):
            differences.append(f"{path}[{index}]: missing {_show(expected[index])}")
        return differences
    if actual is _MISSING or not _same(expected, actual):
        return [f"{where}: expected {_show(expected)}, found {_show(actual)}"]
    return []


def _normalise_words(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    words = text.split()
    if len(words) > 1 and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)


def _numbers(text: str) -> set[float]:
    found = set()
    for raw in _NUMBER.findall(text):
        try:
            found.add(float(raw.replace(",", "")))
        except ValueError:
            continue
    return found


def answer_matches(answer: str, expected: str | int | float | Sequence[Any]) -> tuple[bool, str]:
    """Whether ``answer`` matches ``expected`` (one value or a list of accepted values), with feedback."""
    accepted = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    shown = " or ".join(repr(value) for value in accepted)
    if not answer.strip():
        return False, f"the answer was empty; expected {shown}"
    for value in accepted:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers = _numbers(answer)
            if len(numbers) == 1 and math.isclose(next(iter(numbers)), float(value), abs_tol=1e-9):
                return True, f"answered {value!r}"
            if len(numbers) > 1:
                continue
        elif _normalise_words(str(value)) == _normalise_words(answer):
            return True, f"answered {value!r}"
    numbers = _numbers(answer)
    if any(isinstance(value, (int, float)) and not isinstance(value, bool) for value in accepted) and len(numbers) > 1:
        return False, f"the answer gives several numbers ({answer.strip()[:80]!r}); give exactly one: {shown}"
    return False, f"expected {shown}, found {answer.strip()[:120]!r}"


def grade_episode(
    *,
    state: Mapping[str, Any],
    answer: str | None,
    expected_state: Mapping[str, Any] | None,
    expected_paths: Mapping[str, Any] | None,
    expected_answer: Any,
    expected_url: str | None,
    final_url: str,
    invalid_actions: int,
    page_errors: Sequence[str],
    blocked_requests: Sequence[str],
) -> Score:
    """The episode's :class:`Score` (see the module docstring)."""
    components: dict[str, Score] = {}
    outcome_ok = True
    differences: list[str] = []
    if expected_state is not None:
        differences.extend(diff_values(dict(expected_state), dict(state)))
    if expected_paths:
        for path, value in expected_paths.items():
            found = lookup_path(state, path)
            if found is _MISSING or not _same(value, found):
                differences.append(f"{path}: expected {_show(value)}, found {_show(found)}")
    if expected_url is not None and final_url.rstrip("/") != expected_url.rstrip("/"):
        differences.append(f"final page: expected {expected_url}, found {final_url}")
    if expected_state is not None or expected_paths or expected_url is not None:
        passed = not differences
        outcome_ok &= passed
        feedback = (
            "the site's state is as expected"
            if passed
            else "; ".join(differences[:12]) + (f"; and {len(differences) - 12} more" if len(differences) > 12 else "")
        )
        components["state"] = Score(float(passed), feedback=feedback, metadata={"differences": differences})
    if expected_answer is not None:
        passed, feedback = answer_matches(answer or "", expected_answer)
        outcome_ok &= passed
        components["answer"] = Score(float(passed), feedback=feedback)
    problems = []
    if invalid_actions:
        problems.append(f"{invalid_actions} invalid action(s)")
    if page_errors:
        problems.append(f"page errors: {', '.join(page_errors[:5])}")
    components["no_errors"] = Score(float(not problems), feedback="; ".join(problems) if problems else "no errors")
    value = (1.0 if not problems else ERROR_FACTOR) if outcome_ok else 0.0
    if outcome_ok:
        feedback = "task completed" + (
            "" if not problems else f", but with errors ({'; '.join(problems)}): reward halved"
        )
    else:
        feedback = "; ".join(
            f"{name}: {component.feedback}"
            for name, component in components.items()
            if component.value < 1 and name != "no_errors"
        )
    metadata = {
        "final_url": final_url,
        "answer": answer,
        "invalid_actions": invalid_actions,
        "blocked_requests": list(blocked_requests),
    }
    return Score(value, components, metadata, feedback=feedback)
