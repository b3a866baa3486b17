"""rolloutgym-bfcl: the Berkeley Function Calling Leaderboard (BFCL v4) as rolloutgym environments.

One env id per BFCL category (``bfcl/simple-v0``, ``bfcl/multi-turn-base-v0``, ...), tasks,
function docs and executable backends from the ``bfcl-eval`` package, graded as BFCL's
own checkers grade function-calling models.

Names are imported on first use, so that registering the plugin (which imports
``rolloutgym_bfcl.plugin``, and with it this package) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._ast import Verdict, check_calls, standardize
    from ._categories import CATEGORIES, GROUND_TRUTH_REJECTED, SKIPPED, Category, category_for_env
    from ._data import BfclTask, load_tasks, package_version, tasks_for_env
    from ._decode import decode_reply
    from ._execution import Backends, parse_call_string, render_call
    from ._tools import tool_definitions
    from .envs import BfclMultiTurnEnv, BfclSingleTurnEnv, make_env

_WHERE = {
    "Verdict": "_ast",
    "check_calls": "_ast",
    "standardize": "_ast",
    "CATEGORIES": "_categories",
    "SKIPPED": "_categories",
    "GROUND_TRUTH_REJECTED": "_categories",
    "Category": "_categories",
    "category_for_env": "_categories",
    "BfclTask": "_data",
    "load_tasks": "_data",
    "package_version": "_data",
    "tasks_for_env": "_data",
    "decode_reply": "_decode",
    "Backends": "_execution",
    "parse_call_string": "_execution",
    "render_call": "_execution",
    "tool_definitions": "_tools",
    "BfclMultiTurnEnv": "envs",
    "BfclSingleTurnEnv": "envs",
    "make_env": "envs",
}

__all__ = [
    "Backends",
    "BfclMultiTurnEnv",
    "BfclSingleTurnEnv",
    "BfclTask",
    "CATEGORIES",
    "Category",
    "GROUND_TRUTH_REJECTED",
    "SKIPPED",
    "Verdict",
    "category_for_env",
    "check_calls",
    "decode_reply",
    "load_tasks",
    "make_env",
    "package_version",
    "parse_call_string",
    "render_call",
    "standardize",
    "tasks_for_env",
    "tool_definitions",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'rolloutgym_bfcl' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
