"""rolloutgym-bfcl: the Berkeley Function Calling Leaderboard (BFCL v4) as rolloutgym environments.

One env id per BFCL category (``bfcl/simple-v0``, ``bfcl/multi-turn-base-v0``, ...), tasks,
function docs and executable backends from the ``bfcl-eval`` package, graded as BFCL's
own checkers grade function-calling models.
"""

from ._ast import Verdict, check_calls, standardize
from ._categories import CATEGORIES, SKIPPED, Category, category_for_env
from ._data import BfclTask, load_tasks, package_version, tasks_for_env
from ._decode import decode_reply
from ._execution import Backends, parse_call_string, render_call
from ._tools import tool_definitions
from .envs import BfclMultiTurnEnv, BfclSingleTurnEnv, make_env

__all__ = [
    "CATEGORIES",
    "SKIPPED",
    "Backends",
    "BfclMultiTurnEnv",
    "BfclSingleTurnEnv",
    "BfclTask",
    "Category",
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
