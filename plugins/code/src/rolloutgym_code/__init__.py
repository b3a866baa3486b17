"""rolloutgym-code: code-editing environments whose hidden tests run in a real sandbox.

The public names are imported lazily, so that ``rolloutgym list`` (which imports only
``rolloutgym_code.plugin``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

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

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "envs": ["CodeEditingEnv", "CodeTask"],
        "grading": ["GradingInput", "grade_repository"],
        "sandbox": [
            "Sandbox",
            "SandboxLimits",
            "SandboxResult",
            "SandboxUnavailable",
            "available_sandboxes",
            "get_sandbox",
            "register_sandbox",
        ],
        "tasks": ["pybugs_tasks", "pyfunc_tasks"],
        "template": ["compile_code_editing"],
        "testrun": ["TestRun", "run_pytest"],
        "workspace": ["Workspace", "WorkspaceError"],
    },
)
