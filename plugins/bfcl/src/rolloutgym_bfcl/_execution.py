"""Running function calls on BFCL's executable backends (file system, trading, travel, ...).

BFCL's harness turns each call into a Python string and ``eval``s it. Here nothing is
evaluated: a call is a name and a JSON object of arguments; the name must be a public
method of one of the task's backend instances (BFCL's own mapping: the later class wins a
shared name) and the arguments plain JSON values of sane size; then the bound method is
called with them. The result is rendered as BFCL renders it (strings as they are, dicts
as JSON, anything else through ``str``) and a failure becomes BFCL's
``"Error during execution: ..."`` text, so the tool messages and the response check see
the same strings BFCL's harness would. The reference calls of the ground truth are parsed
with ``ast`` (literals only) and run the same way.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["Backends", "Call", "parse_call_string", "render_call"]

# BFCL refuses these names before evaluating a call.
_REFUSED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
_MAX_INT = 2**31
_MAX_TEXT = 1_000_000
_MAX_DEPTH = 32
# Arguments whose size drives the backend's work (int ** int, Decimal precision): bounded
# so that a policy cannot stall a run. BFCL itself does not bound them; no reference call
# comes near these bounds.
_BOUNDED = {
    ("power", "exponent"): 10_000,
    ("power", "base"): 10**9,
    ("square_root", "precision"): 10_000,
    ("round_number", "decimal_places"): 10_000,
}

Call = tuple[str, tuple[Any, ...], dict[str, Any]]


def parse_call_string(text: str) -> Call:
    """``"cd(folder='document')"`` -> ``("cd", (), {"folder": "document"})`` (literal arguments only)."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {text!r}")
    positional = tuple(ast.literal_eval(argument) for argument in node.args)
    keywords = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError(f"**arguments are not supported: {text!r}")
        keywords[keyword.arg] = ast.literal_eval(keyword.value)
    return node.func.id, positional, keywords


def render_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as BFCL writes a function-calling model's call (``name(key=repr(value),...)``)."""
    return f"{name}({','.join(f'{key}={_safe_repr(value)}' for key, value in arguments.items())})"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except ValueError:  # an int past Python's int-to-text limit (4300 digits)
        return f"<an integer of about {_digits(value)} digits>"


def _digits(value: Any) -> int:
    return int(abs(value).bit_length() * 0.30103) + 1 if type(value) is int else 0


def _check_value(value: Any, depth: int = 0) -> str | None:
    if depth > _MAX_DEPTH:
        return "arguments are nested too deeply"
    if value is None or type(value) is bool:
        return None
    if type(value) is int:
        if abs(value) <= _MAX_INT:
            return None
        shown = str(value) if value.bit_length() < 200 else f"of about {_digits(value)} digits"
        return f"integer {shown} is out of range (at most {_MAX_INT} in magnitude)"
    if type(value) is float:
        return None if math.isfinite(value) else f"{value} is not a finite number"
    if type(value) is str:
        return None if len(value) <= _MAX_TEXT else f"a string of {len(value)} characters is too long"
    if type(value) in (list, tuple):
        for item in value:
            problem = _check_value(item, depth + 1)
            if problem:
                return problem
        return None
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str:
                return "object keys must be strings"
            problem = _check_value(item, depth + 1)
            if problem:
                return problem
        return None
    return f"{type(value).__name__} is not a JSON value"


def _render(result: Any) -> str:
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


class Backends:
    """The backend instances of one task, loaded with its scenario, and calls on them.

    Args:
        involved_classes: BFCL class names (``GorillaFileSystem``, ``TradingBot``, ...).
        initial_config: the task's per-class scenario (deep-copied before loading).
        long_context: load the scenario with BFCL's long-context padding.
    """

    def __init__(
        self, involved_classes: tuple[str, ...] | list[str], initial_config: Mapping[str, Any], *, long_context: bool
    ) -> None:
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for class_name in involved_classes:
            module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
            instance = getattr(module, class_name)()
            if class_name not in STATELESS_CLASSES:
                instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
            self.instances[class_name] = instance
            for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method_name.startswith("_"):
                    self.methods[method_name] = method

    def execute(self, name: Any, positional: tuple[Any, ...] = (), arguments: Mapping[str, Any] | None = None) -> str:
        """Run one call; returns BFCL's rendering of its result or of its error."""
        arguments = dict(arguments or {})
        if type(name) is not str or not name.isidentifier():
            return f"Error during execution: {name!r} is not a function name"
        if name in _REFUSED:
            return f"Error during execution: Function call {name} is not allowed."
        method = self.methods.get(name)
        if method is None:
            return f"Error during execution: name '{name}' is not defined"
        for key in arguments:
            if type(key) is not str or not key.isidentifier():
                return f"Error during execution: invalid argument name {key!r}"
        problem = _check_value(list(positional)) or _check_value(arguments)
        if problem is None:
            for key, value in arguments.items():
                bound = _BOUNDED.get((name, key))
                if bound is not None and type(value) in (int, float) and abs(value) > bound:
                    problem = f"{key}={value} is out of range (at most {bound} in magnitude)"
        if problem:
            return f"Error during execution: {problem}"
        try:
            return _render(method(*positional, **arguments))
        except Exception as error:  # noqa: BLE001 - BFCL reports every failure as text
            return f"Error during execution: {error}"
