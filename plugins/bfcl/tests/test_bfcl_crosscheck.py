"""Our verdicts equal BFCL's own checkers on constructed model outputs.

Single-turn: for a seeded sample of tasks of every AST category, the possible-answer reply
and many near misses built from it (wrong function, missing/extra/renamed argument, wrong
type, changed value, strings in other case/spacing/punctuation, int for float, dropped
optional argument, reordered/dropped/duplicated parallel calls, non-string Java/JavaScript
values) are graded by the env and by the package's ``ast_checker`` (with its
``is_function_calling_format_output`` rule first); the verdicts must be equal on every one.
Relevance categories: the package's ``is_empty_output`` rule on the decoded reply.
Multi-turn: see ``test_bfcl_multi_turn.py``.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from rolloutgym_bfcl import CATEGORIES, BfclSingleTurnEnv, tasks_for_env
from rolloutgym_bfcl._oracle import reference_calls

TASKS_PER_CATEGORY = 25
AST_CATEGORIES = [category for category in CATEGORIES if category.kind == "ast"]


def _message(calls: list[dict[str, Any]], *, json_arguments: bool = False) -> dict[str, Any]:
    tool_calls = []
    for index, call in enumerate(calls):
        name, arguments = next(iter(call.items()))
        tool_calls.append(
            {"id": f"c{index}", "name": name, "arguments": json.dumps(arguments) if json_arguments else arguments}
        )
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def _other_type(value: Any) -> Any:
    if type(value) is str:
        return 7
    if type(value) is bool:
        return "true"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return str(value)
    if type(value) is list:
        return json.dumps(value)
    if type(value) is dict:
        return [value]
    return "x"


def _changed(value: Any) -> Any:
    if type(value) is str:
        return value + " extra"
    if type(value) is bool:
        return not value
    if type(value) in (int, float):
        return value + 1
    if type(value) is list:
        return value[:-1] if value else ["x"]
    if type(value) is dict:
        return {**value, "unexpected_key": "x"}
    return value


def _respellings(value: str) -> list[str]:
    return [
        value.upper(),
        value.lower(),
        f" {value} ",
        value.replace(" ", "_"),
        value.replace(" ", "-") + ".",
        value.replace("'", '"'),
        value.replace(",", ""),
    ]


def _variants(task: Any, language: str) -> list[tuple[str, list[dict[str, Any]]]]:
    base = reference_calls(task.functions, task.ground_truth, language)
    variants: list[tuple[str, list[dict[str, Any]]]] = [("right", base)]
    name, arguments = next(iter(base[0].items()))
    rest = base[1:]

    def replace_first(new_arguments: dict[str, Any], new_name: str = name) -> list[dict[str, Any]]:
        return [{new_name: new_arguments}, *rest]

    variants.append(("wrong function", replace_first(arguments, name + "_v2")))
    variants.append(("dotted name", replace_first(arguments, next(iter(task.ground_truth[0])))))
    variants.append(("extra argument", replace_first({**arguments, "unexpected_argument": "x"})))
    variants.append(("no arguments", replace_first({})))
    properties = next(function for function in task.functions if function["name"].replace(".", "_") == name)[
        "parameters"
    ]["properties"]
    for param, value in arguments.items():
        without = {key: item for key, item in arguments.items() if key != param}
        variants.append((f"missing {param}", replace_first(without)))
        variants.append((f"renamed {param}", replace_first({**without, param + "_": value})))
        variants.append((f"wrong type {param}", replace_first({**arguments, param: _other_type(value)})))
        variants.append((f"changed {param}", replace_first({**arguments, param: _changed(value)})))
        if type(value) is str:
            for index, spelling in enumerate(_respellings(value)):
                variants.append((f"respelled {param} #{index}", replace_first({**arguments, param: spelling})))
        if type(value) is float and value.is_integer():
            variants.append((f"int for float {param}", replace_first({**arguments, param: int(value)})))
        if type(value) is int and properties.get(param, {}).get("type") == "float":
            variants.append((f"float for int {param}", replace_first({**arguments, param: float(value)})))
        if type(value) is list and value:
            variants.append((f"reversed list {param}", replace_first({**arguments, param: list(reversed(value))})))
            if type(value[0]) is str:
                variants.append(
                    (
                        f"upper list {param}",
                        replace_first(
                            {**arguments, param: [item.upper() if type(item) is str else item for item in value]}
                        ),
                    )
                )
        if type(value) is dict and value:
            first_key = next(iter(value))
            variants.append(
                (
                    f"dict without {first_key}",
                    replace_first({**arguments, param: {k: v for k, v in value.items() if k != first_key}}),
                )
            )
    for param in properties:
        if param not in arguments:
            candidates = next(iter(task.ground_truth[0].values())).get(param, ["x"])
            present = [candidate for candidate in candidates if candidate != ""]
            variants.append(
                (f"added optional {param}", replace_first({**arguments, param: present[0] if present else "x"}))
            )
    if len(base) > 1:
        variants.append(("reversed order", list(reversed(base))))
        variants.append(("rotated order", base[1:] + base[:1]))
        variants.append(("dropped last call", base[:-1]))
        variants.append(("duplicated call", base + base[:1]))
    else:
        variants.append(("called twice", base + base))
    return variants


def _reference_verdict(
    reference_ast_checker: Any, reference_utils: Any, task: Any, calls: list[dict[str, Any]], language: str
) -> bool:
    model = reference_ast_checker.REFERENCE_MODEL_NAME
    from bfcl_eval.constants.enums import Language

    if not reference_utils.is_function_calling_format_output(calls):
        return False
    languages = {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}
    try:
        result = reference_ast_checker.ast_checker(
            task.functions, json.loads(json.dumps(calls)), task.ground_truth, languages[language], task.category, model
        )
    except Exception:  # noqa: BLE001 - the reference crashing on an output: that output does not pass
        return False
    return bool(result["valid"])


@pytest.mark.parametrize("category", AST_CATEGORIES, ids=lambda category: category.name)
def test_ast_verdicts_equal_the_package_checker(
    category: Any, reference_ast_checker: Any, reference_utils: Any
) -> None:
    tasks = tasks_for_env(category.env_id)
    sample = random.Random(f"bfcl-crosscheck-{category.name}").sample(tasks, min(TASKS_PER_CATEGORY, len(tasks)))
    compared = passed = 0
    mismatches = []
    for task in sample:
        environment = BfclSingleTurnEnv(task, category)
        for label, calls in _variants(task, category.language):
            ours = environment.evaluate(_message(calls)).value == 1.0
            theirs = _reference_verdict(reference_ast_checker, reference_utils, task, calls, category.language)
            compared += 1
            passed += theirs
            if ours != theirs:
                mismatches.append(f"{task.id} [{label}] ours={ours} bfcl={theirs}: {json.dumps(calls)[:300]}")
    assert not mismatches, (
        f"{len(mismatches)} of {compared} verdicts differ from bfcl-eval's ast_checker:\n" + "\n".join(mismatches[:20])
    )
    # Both outcomes occur, so equality is not vacuous.
    assert 0 < passed < compared, (passed, compared)
    assert compared >= 150


def test_cross_check_covers_several_hundred_outputs_per_language(
    reference_ast_checker: Any, reference_utils: Any
) -> None:
    """The Java and JavaScript checks run through the package's literal converters."""
    for name in ("simple-java", "simple-javascript"):
        category = next(category for category in CATEGORIES if category.name == name)
        task = tasks_for_env(category.env_id)[0]
        calls = reference_calls(task.functions, task.ground_truth, category.language)
        environment = BfclSingleTurnEnv(task, category)
        assert environment.evaluate(_message(calls)).value == 1.0
        # A Java/JavaScript value that is not a string literal is a type error in BFCL.
        name_, arguments = next(iter(calls[0].items()))
        broken = [{name_: {key: 12345 for key in arguments}}]
        assert environment.evaluate(_message(broken)).value == 0.0
        assert _reference_verdict(reference_ast_checker, reference_utils, task, broken, category.language) is False


def test_json_string_arguments_decode_like_bfcl() -> None:
    """OpenAI wire shape (arguments as a JSON string) grades like parsed arguments; bad JSON does not decode."""
    category = next(category for category in CATEGORIES if category.name == "simple")
    task = tasks_for_env(category.env_id)[0]
    calls = reference_calls(task.functions, task.ground_truth, "python")
    environment = BfclSingleTurnEnv(task, category)
    assert environment.evaluate(_message(calls, json_arguments=True)).value == 1.0
    broken = _message(calls)
    broken["tool_calls"][0]["arguments"] = '{"base": 10,'
    score = environment.evaluate(broken)
    assert score.value == 0.0 and score.metadata["error_type"] == "ast_decoder:decoder_failed"
    score = environment.evaluate({"role": "assistant", "content": "calculate_triangle_area(base=10, height=5)"})
    assert score.value == 0.0 and "no tool calls" in (score.feedback or "")


@pytest.mark.parametrize("name", ["irrelevance", "live-irrelevance", "live-relevance"])
def test_relevance_verdicts_equal_the_package_rule(name: str, reference_utils: Any) -> None:
    category = next(category for category in CATEGORIES if category.name == name)
    tasks = random.Random(f"bfcl-relevance-{name}").sample(tasks_for_env(category.env_id), 10)
    for task in tasks:
        environment = BfclSingleTurnEnv(task, category)
        function = task.functions[0]["name"].replace(".", "_")
        replies: list[tuple[Any, Any]] = [
            ({"role": "assistant", "content": "I cannot help with that."}, None),
            ({"role": "assistant", "content": ""}, None),
            (_message([{function: {"query": "x"}}]), [{function: {"query": "x"}}]),
            (_message([{function: {}}]), [{function: {}}]),
            (_message([{function: {}}, {function: {"a": 1}}]), [{function: {}}, {function: {"a": 1}}]),
            (
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "c", "name": function, "arguments": "[1, 2]"}],
                },
                [{function: [1, 2]}],
            ),
            (
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "c", "name": function, "arguments": "{not json"}],
                },
                None,
            ),
        ]
        for reply, decoded in replies:
            # BFCL: a reply that does not decode, or decodes to no call, "calls nothing".
            called = decoded is not None and not reference_utils.is_empty_output(decoded)
            expected = (not called) if category.kind == "irrelevance" else called
            assert environment.evaluate(reply).value == float(expected), (task.id, reply)


def test_a_tool_call_the_llm_loop_could_not_parse_is_not_a_call() -> None:
    """The Hermes parser sends an unreadable <tool_call> block as ``unparseable_tool_call``."""
    from rolloutgym.llm import parse_reply

    action = parse_reply(
        "<tool_call>not json at all</tool_call>", text_action=False, tool_names=frozenset({"f"})
    ).action
    assert action["tool_calls"][0]["name"] == "unparseable_tool_call"
    irrelevance = next(category for category in CATEGORIES if category.name == "irrelevance")
    environment = BfclSingleTurnEnv(tasks_for_env(irrelevance.env_id)[0], irrelevance)
    assert environment.evaluate(action).value == 1.0  # BFCL: a reply that does not decode calls nothing
