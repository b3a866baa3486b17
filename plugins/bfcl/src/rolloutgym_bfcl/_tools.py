"""BFCL function docs -> the OpenAI-style tool definitions a function-calling model is given.

This follows what BFCL's inference does for function-calling (FC) models of the OpenAI
chat-completions style: a language hint is appended to each description (Java and
JavaScript parameters become strings holding the language's literal), names lose their dots
(``math.factorial`` -> ``math_factorial``; the checker compares names the same way), the
parameter object is typed ``object`` and BFCL's own types are mapped through the package's
``GORILLA_TO_OPENAPI`` table (``float`` -> ``number`` with ``format: float``, ``dict`` ->
``object``, ``tuple`` -> ``array``, ``any`` -> ``string``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["fc_name", "tool_definitions"]

_HINTS = {
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
    "python": " Note that the provided function is in Python 3 syntax.",
}


def fc_name(name: str) -> str:
    """A function's name as FC models see and call it (dots become underscores)."""
    return name.replace(".", "_")


def _add_language_hint(function: dict[str, Any], language: str) -> None:
    function["description"] = function["description"] + _HINTS[language]
    if language == "python":
        return
    label = "Java" if language == "java" else "JavaScript"
    for value in function["parameters"]["properties"].values():
        kind = value["type"]
        if kind == "any":
            value["description"] += f" This parameter can be of any type of {label} object in string representation."
        else:
            value["description"] += f" This is {label} {kind} type parameter in string representation."
        listy = ("ArrayList", "Array") if language == "java" else ("array",)
        if kind in listy:
            value["description"] += (
                f" The list elements are of type {value['items']['type']}; they are not in string representation."
            )
            del value["items"]
        if language == "javascript" and kind == "dict" and "properties" in value:
            value["description"] += (
                " The dictionary entries have the following schema; they are not in string representation. "
                f"{json.dumps(value['properties'])}"
            )
            del value["properties"]
        value["type"] = "string"


def _openapi_types(properties: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            kind = value["type"]
            if kind == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + " This is a float type value."
            value["type"] = mapping.get(kind, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _openapi_types(value["properties"], mapping)
            elif "items" in value:
                items = value["items"]
                items["type"] = mapping[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = mapping[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _openapi_types(items["properties"], mapping)
    return properties


def tool_definitions(functions: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """``[{"type": "function", "function": {...}}]`` for BFCL function docs (inputs untouched)."""
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    tools = []
    for original in functions:
        function = copy.deepcopy(original)
        _add_language_hint(function, language)
        function["name"] = fc_name(function["name"])
        function["parameters"]["type"] = "object"
        function["parameters"]["properties"] = _openapi_types(function["parameters"]["properties"], GORILLA_TO_OPENAPI)
        tools.append({"type": "function", "function": function})
    return tools
