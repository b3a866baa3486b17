"""rolloutgym-bfcl: the Berkeley Function Calling Leaderboard (BFCL v4) as rolloutgym environments.

One env id per BFCL category (``bfcl/simple-v0``, ``bfcl/multi-turn-base-v0``, ...), tasks,
function docs and executable backends from the ``bfcl-eval`` package, graded as BFCL's
own checkers grade function-calling models.

Names are imported on first use, so that registering the plugin (which imports
``rolloutgym_bfcl.plugin``, and with it this package) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._categories import CATEGORIES, GROUND_TRUTH_REJECTED, SKIPPED, Category, category_for_env
    from ._data import BfclTask, load_tasks, package_version, tasks_for_env
    from ._decode import decode_reply
    from ._execution import Backends, parse_call_string, render_call
    from ._tools import tool_definitions
    from .envs import BfclMultiTurnEnv, BfclSingleTurnEnv, make_env
    from .grading import Verdict, check_calls, standardize

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_categories": ["CATEGORIES", "Category", "GROUND_TRUTH_REJECTED", "SKIPPED", "category_for_env"],
        "_data": ["BfclTask", "load_tasks", "package_version", "tasks_for_env"],
        "_decode": ["decode_reply"],
        "_execution": ["Backends", "parse_call_string", "render_call"],
        "_tools": ["tool_definitions"],
        "envs": ["BfclMultiTurnEnv", "BfclSingleTurnEnv", "make_env"],
        "grading": ["Verdict", "check_calls", "standardize"],
    },
)
