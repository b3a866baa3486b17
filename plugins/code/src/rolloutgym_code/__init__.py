"""rolloutgym-code: code-editing environments whose hidden tests run in a real sandbox.

The public names are imported lazily, so that ``rolloutgym list`` (which imports only
``rolloutgym_code.plugin``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "CodeEditingEnv",
    "CodeTask",
    "GradingInput",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "TestRun",
    "Workspace",
    "WorkspaceError",
    "available_sandboxes",
    "compile_code_editing",
    "get_sandbox",
    "grade_repository",
    "pybugs_tasks",
    "pyfunc_tasks",
    "register_sandbox",
    "run_pytest",
]

_WHERE = {
    "CodeEditingEnv": "envs",
    "CodeTask": "envs",
    "GradingInput": "grading",
    "grade_repository": "grading",
    "Sandbox": "sandbox",
    "SandboxLimits": "sandbox",
    "SandboxResult": "sandbox",
    "SandboxUnavailable": "sandbox",
    "available_sandboxes": "sandbox",
    "get_sandbox": "sandbox",
    "register_sandbox": "sandbox",
    "TestRun": "testrun",
    "run_pytest": "testrun",
    "Workspace": "workspace",
    "WorkspaceError": "workspace",
    "compile_code_editing": "template",
    "pybugs_tasks": "tasks",
    "pyfunc_tasks": "tasks",
}

if TYPE_CHECKING:
    from .envs import CodeEditingEnv, CodeTask
    from .grading import GradingInput, grade_repository
    from .sandbox import (
        Sandbox,
        SandboxLimits,
        SandboxResult,
        SandboxUnavailable,
        available_sandboxes,
        get_sandbox,
        register_sandbox,
    )
    from .tasks import pybugs_tasks, pyfunc_tasks
    from .template import compile_code_editing
    from .testrun import TestRun, run_pytest
    from .workspace import Workspace, WorkspaceError


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'rolloutgym_code' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
