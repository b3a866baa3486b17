"""Declarative environments: the rollout SDK's ``Environment``, ``Task`` and builders, run locally.

An env file written for the SDK changes only its import line::

    from rolloutgym.declarative import Environment, Task, lookup_tool, action_tool, workflow_config

and runs with ``rolloutgym run my_env.py --policy oracle``. Each template is compiled by
the plugin that registers it through the ``rolloutgym_templates`` hook (``workflow`` and
``custom``: rolloutgym-workflow; ``sql``: rolloutgym-sql; ``code-editing``: rolloutgym-code;
``browser``: rolloutgym-browser).
"""

from rolloutgym_protocol.errors import EnvFileError

from ._environment import SDK_TEMPLATES, Environment
from ._task import SPLITS, Task
from .builders import (
    action_tool,
    browser_config,
    browser_page,
    code_editing_config,
    custom_config,
    custom_tool,
    lookup_tool,
    mock_tool,
    primitive,
    verifier_config,
    workflow_config,
)
from .loader import EnvFile, compile_environment, load_env_file, load_environments, open_env_file, resolve_env_file
from .params import expand_params_schema
from .shapes import validate_config
from .templating import TemplateError, interpolate

__all__ = [
    "SDK_TEMPLATES",
    "SPLITS",
    "EnvFile",
    "EnvFileError",
    "Environment",
    "Task",
    "TemplateError",
    "action_tool",
    "browser_config",
    "browser_page",
    "code_editing_config",
    "compile_environment",
    "custom_config",
    "custom_tool",
    "expand_params_schema",
    "interpolate",
    "load_env_file",
    "load_environments",
    "lookup_tool",
    "mock_tool",
    "open_env_file",
    "primitive",
    "resolve_env_file",
    "validate_config",
    "verifier_config",
    "workflow_config",
]
