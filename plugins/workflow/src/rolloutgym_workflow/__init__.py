"""rolloutgym-workflow: the ``workflow`` and ``custom`` templates and ``workflow/refund-v0``."""

from .envs import WorkflowEnv
from .template import Program, compile_custom, compile_program, compile_workflow

__all__ = ["Program", "WorkflowEnv", "compile_custom", "compile_program", "compile_workflow"]
