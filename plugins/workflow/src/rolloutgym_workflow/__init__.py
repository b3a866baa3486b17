"""rolloutgym-workflow: the ``workflow`` and ``custom`` templates, the refund envs, MCP servers as tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from .envs import WorkflowEnv
    from .mcp_env import McpToolSource, McpWorkflowEnv
    from .mcp_session import McpServerError
    from .mcp_settings import McpSettings
    from .template import Program, compile_custom, compile_program, compile_workflow

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "envs": ["WorkflowEnv"],
        "mcp_env": ["McpToolSource", "McpWorkflowEnv"],
        "mcp_session": ["McpServerError"],
        "mcp_settings": ["McpSettings"],
        "template": ["Program", "compile_custom", "compile_program", "compile_workflow"],
    },
)
