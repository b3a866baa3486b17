"""BFCL's AST check of single-turn function calls against possible answers.

BFCL's reference is ``bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker``. It cannot
be imported on its own: its module imports BFCL's model registry, which imports the
inference SDKs of every vendor BFCL supports. This module implements the same rules,
written from BFCL's documented behaviour, for function-calling models (dots in names become
underscores), and ``tests/test_bfcl_crosscheck.py`` proves the verdicts equal the
package's checker on several hundred constructed outputs. The rules:

* a call matches a possible answer when the name is right, every required parameter is
  given, no parameter is unknown or absent from the possible answer, each value has the
  documented type (``int`` is accepted for ``float``; a value of the possible answer's own
  type is accepted where the possible answer holds a variable name) and equals one of the
  possible values (strings compared after removing spaces and ``,./-_*^``, lower-cased,
  ``'`` as ``"``; lists and dicts element by element the same way), and every parameter it
  leaves out is optional in the possible answer (listed with ``""``);
* ``simple`` categories need exactly one call; ``multiple`` exactly one call of the
  expected function; ``parallel`` categories as many calls as possible answers, matched in
  any order (each possible answer takes the first unused call that matches it);
* Java and JavaScript values are strings holding the language's literal, converted with
  the package's own ``java_type_converter`` / ``js_type_converter`` before the check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Verdict", "check_calls", "standardize"]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_PYTHON_NESTED = ("array", "tuple")
_LIST_LIKE = ("Array", "ArrayList", "array")
_PUNCTUATION = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: ``valid``, and when not, the messages and BFCL's error type."""

    valid: bool
    errors: tuple[str, ...] = ()
    error_type: str = ""
    is_variable: bool = field(default=False, compare=False)


_VALID = Verdict(True)


def _fail(error_type: str, *errors: str) -> Verdict:
    return Verdict(False, tuple(errors), error_type)


def standardize(text: str) -> str:
    """BFCL's string normalisation: drop spaces and ``,./-_*^``, lower-case, ``'`` -> ``"``."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


def _answer_type(candidates: Any) -> type | None:
    """The type of the first non-optional possible value (None when all are optional)."""
    for candidate in candidates:
        if candidate != "":
            return type(candidate)
    return None


def _check_type(
    param: str, value: Any, candidates: Any, described: str, expected: type, nested: type | None
) -> Verdict:
    answer_type = _answer_type(candidates)
    # A possible answer of another type than documented names a variable (e.g. "x"); then
    # a value of the answer's own type is accepted and compared as is.
    is_variable = answer_type is not None and answer_type != expected
    if type(value) is expected:
        if nested is None:
            return Verdict(True, is_variable=is_variable)
        for candidate in candidates:
            matches = True
            if type(candidate) is list:
                for item in value:
                    if not _check_type(param, item, candidate, str(nested), nested, None).valid:
                        matches = False
                        break
            if matches:
                return Verdict(True, is_variable=is_variable)
        return _fail(
            "type_error:nested",
            f"Nested type checking failed for parameter {param!r}: expected {described} of {nested.__name__}, "
            f"got {value!r}.",
        )
    if answer_type is not None and type(value) is answer_type:
        return Verdict(True, is_variable=True)
    return _fail(
        "type_error:simple",
        f"Incorrect type for parameter {param!r}. Expected type {described}, got {type(value).__name__}. "
        f"Parameter value: {value!r}.",
    )


def _normalise(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _check_string(param: str, value: str, candidates: Any) -> Verdict:
    allowed = [standardize(candidate) for candidate in candidates if type(candidate) is str]
    if standardize(value) in allowed:
        return _VALID
    return _fail(
        "value_error:string",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {candidates}. Case insensitive.",
    )


def _check_list(param: str, value: list[Any], candidates: Any) -> Verdict:
    given = [_normalise(item) for item in value]
    # Iterating each candidate as BFCL does: an optional "" becomes the empty list.
    allowed = [[_normalise(item) for item in candidate] for candidate in candidates]
    if given in allowed:
        return _VALID
    return _fail(
        "value_error:list/tuple", f"Invalid value for parameter {param!r}: {value!r}. Expected one of {candidates}."
    )


def _check_dict(param: str, value: dict[str, Any], candidates: Any) -> Verdict:
    verdict = _fail("dict_checker:unclear")
    for candidate in candidates:
        if candidate == "":
            continue
        verdict = _VALID
        for key, item in value.items():
            if key not in candidate:
                verdict = _fail("value_error:dict_key", f"Unexpected dict key parameter: '{key}'.")
                break
            allowed = [_normalise(option) for option in candidate[key]]
            if _normalise(item) not in allowed:
                verdict = _fail(
                    "value_error:dict_value",
                    f"Invalid value for parameter {key!r}: {item!r}. Expected one of {allowed}.",
                )
                break
        if verdict.valid:
            for key, options in candidate.items():
                if key not in value and "" not in options:
                    verdict = _fail("value_error:dict_key", f"Missing dict key parameter: '{key}'.")
                    break
        if verdict.valid:
            return _VALID
    return verdict


def _check_list_of_dicts(param: str, value: list[Any], candidates: Any) -> Verdict:
    verdict = _fail("list_dict_checker:unclear")
    for candidate in candidates:
        if len(value) != len(candidate):
            verdict = _fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
            continue
        verdict = _VALID
        for position, item in enumerate(value):
            verdict = _check_dict(param, item, [candidate[position]])
            if not verdict.valid:
                break
        if verdict.valid:
            return _VALID
    return verdict


def _expected_types(language: str, details: dict[str, Any], described: str) -> tuple[type, type | None]:
    if language == "python":
        expected = _PYTHON_TYPES[described]
        nested = _PYTHON_TYPES[details["items"]["type"]] if described in _PYTHON_NESTED else None
        return expected, nested
    from bfcl_eval.constants.type_mappings import JAVA_TYPE_CONVERSION, JS_TYPE_CONVERSION

    table = JAVA_TYPE_CONVERSION if language == "java" else JS_TYPE_CONVERSION
    expected = table[described]
    nested = table[details["items"]["type"]] if described in _LIST_LIKE else None
    return expected, nested


def _convert_literal(language: str, value: str, described: str, details: dict[str, Any]) -> Any:
    if language == "java":
        from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import java_type_converter as convert
    else:
        from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter as convert
    if described in _LIST_LIKE:
        return convert(value, described, details["items"]["type"])
    return convert(value, described)


def check_function(function: dict[str, Any], call: dict[str, Any], answer: dict[str, Any], language: str) -> Verdict:
    """One call (``{name: {param: value}}``) against one possible answer (``{name: {param: [values]}}``)."""
    candidates_by_param = next(iter(answer.values()))
    name = function["name"]
    details_by_param = function["parameters"]["properties"]
    expected_name = name.replace(".", "_")
    if expected_name not in call:
        return _fail(
            "simple_function_checker:wrong_func_name", f"Function name {expected_name!r} not found in model output."
        )
    arguments = call[expected_name]
    for param in function["parameters"]["required"]:
        if param not in arguments:
            return _fail("simple_function_checker:missing_required", f"Missing required parameter: {param!r}.")
    for param, value in arguments.items():
        if param not in details_by_param or param not in candidates_by_param:
            return _fail("simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}.")
        details = details_by_param[param]
        described = details["type"]
        candidates = candidates_by_param[param]
        expected, nested = _expected_types(language, details, described)
        if language != "python":
            if type(value) is not str:
                return _fail(
                    f"type_error:{'java' if language == 'java' else 'js'}",
                    f"Incorrect type for parameter {param!r}. Expected type String, got {type(value).__name__}. "
                    f"Parameter value: {value!r}.",
                )
            value = _convert_literal(language, value, described, details)
        if described == "tuple" and type(value) is tuple:
            value = list(value)
        if language == "python" and described == "float" and type(value) is int:
            value = float(value)
        typed = _check_type(param, value, candidates, described, expected, nested)
        if not typed.valid:
            return typed
        if not typed.is_variable:
            if expected is dict:
                verdict = _check_dict(param, value, candidates)
            elif expected is list and nested is dict:
                verdict = _check_list_of_dicts(param, value, candidates)
            elif expected is str:
                verdict = _check_string(param, value, candidates)
            elif expected is list:
                verdict = _check_list(param, value, candidates)
            else:
                verdict = None
            if verdict is not None:
                if not verdict.valid:
                    return verdict
                continue
        if value not in candidates:
            return _fail(
                "value_error:others", f"Invalid value for parameter {param!r}: {value!r}. Expected one of {candidates}."
            )
    for param, candidates in candidates_by_param.items():
        if param not in arguments and "" not in candidates:
            return _fail(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return _VALID


def _describe(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((function for function in functions if function["name"] == name), None)


def check_calls(
    functions: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    category: str,
    language: str,
) -> Verdict:
    """BFCL's verdict on a decoded reply (``[{name: {param: value}}, ...]``) for a category."""
    if "parallel" in category:
        if len(calls) != len(answers):
            return _fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
        used: set[int] = set()
        for position, answer in enumerate(answers):
            function = _describe(functions, next(iter(answer)))
            if function is None:
                raise KeyError(f"no function doc for possible answer {next(iter(answer))!r}")
            verdict = _VALID
            for index, call in enumerate(calls):
                if index in used:
                    continue
                verdict = check_function(function, call, answer, language)
                if verdict.valid:
                    used.add(index)
                    break
            if not verdict.valid:
                return _fail(
                    "parallel_function_checker_no_order:cannot_find_match",
                    f"Could not find a matching function among the calls for possible answer {position}: "
                    f"{', '.join(verdict.errors)}",
                )
        return _VALID
    if "multiple" in category:
        if len(calls) != len(answers):
            return _fail("multiple_function_checker:wrong_count", "Wrong number of functions.")
        function = _describe(functions, next(iter(answers[0])))
        if function is None:
            raise KeyError(f"no function doc for possible answer {next(iter(answers[0]))!r}")
        return check_function(function, calls[0], answers[0], language)
    if len(calls) != 1:
        return _fail("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_function(functions[0], calls[0], answers[0], language)
