"""rolloutgym: the environment layer for agentic RL post-training and evaluation of LLMs.

Every public name of rolloutlib 0.2.0 is here with the same meaning, so rolloutlib code
ports by changing its imports. On top: the plugin registry (``make``, ``load``,
``make_policy``), run files, and the ``rolloutgym`` CLI.
"""

from importlib.metadata import PackageNotFoundError, version

from rolloutgym_protocol import (
    AsyncEnv,
    AsyncPolicy,
    AsyncSingleTurnEnv,
    Criterion,
    Env,
    EnvSpec,
    ExporterSpec,
    GraderSpec,
    Policy,
    PolicyOutput,
    PolicySpec,
    RolloutError,
    RolloutGymError,
    Rubric,
    Score,
    SingleTurnEnv,
    Step,
    TemplateSpec,
    Trajectory,
    TrajectoryGroup,
    as_async,
    as_sync,
    check_async_env,
    check_env,
    hookimpl,
)

from . import datasets, envs, errors, evals, graders, rollouts, spaces
from .datasets import Dataset, RLDataset
from .graders import AsyncGradingWrapper, CompositeGrader, GradingWrapper, LLMGrader
from .registry import (
    Registry,
    get_registry,
    make_policy,
    policies,
    register_gymnasium,
)
from .registry import (
    envs as list_envs,
)
from .rollouts import arollout, arollout_group, arollout_tree, rollout, rollout_group, rollout_tree
from .runner import RunConfig, RunResult, arun, run
from .sources import load, make, make_async

try:
    __version__ = version("rolloutgym")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"

__all__ = [
    "AsyncEnv",
    "AsyncGradingWrapper",
    "AsyncPolicy",
    "AsyncSingleTurnEnv",
    "CompositeGrader",
    "Criterion",
    "Dataset",
    "Env",
    "EnvSpec",
    "ExporterSpec",
    "GraderSpec",
    "GradingWrapper",
    "LLMGrader",
    "Policy",
    "PolicyOutput",
    "PolicySpec",
    "RLDataset",
    "Registry",
    "RolloutError",
    "RolloutGymError",
    "Rubric",
    "RunConfig",
    "RunResult",
    "Score",
    "SingleTurnEnv",
    "Step",
    "TemplateSpec",
    "Trajectory",
    "TrajectoryGroup",
    "__version__",
    "arollout",
    "arollout_group",
    "arollout_tree",
    "arun",
    "as_async",
    "as_sync",
    "check_async_env",
    "check_env",
    "datasets",
    "envs",
    "errors",
    "evals",
    "get_registry",
    "graders",
    "hookimpl",
    "list_envs",
    "load",
    "make",
    "make_async",
    "make_policy",
    "policies",
    "register_gymnasium",
    "rollout",
    "rollout_group",
    "rollout_tree",
    "rollouts",
    "run",
    "spaces",
]

# The rollout SDK's names for declarative environments, loaded on first use (an SDK env
# file ports with `from rolloutgym import Environment, Task, ...`).
_DECLARATIVE = (
    "Environment",
    "Task",
    "action_tool",
    "browser_config",
    "browser_page",
    "code_editing_config",
    "custom_config",
    "custom_tool",
    "lookup_tool",
    "mock_tool",
    "primitive",
    "verifier_config",
    "workflow_config",
)
__all__ += list(_DECLARATIVE)


# The platform's clients (rolloutgym.platform), loaded on first use so `import rolloutgym` stays fast.
_PLATFORM = ("AsyncClient", "Client")
__all__ += list(_PLATFORM)

# `rolloutgym.check(ENV)`: the env's report card (rolloutgym.checks), loaded on first use.
_CHECKS = ("check",)
__all__ += list(_CHECKS)


def __getattr__(name: str) -> object:
    if name in _PLATFORM:
        from . import platform

        value = getattr(platform, name)
        globals()[name] = value
        return value
    if name in _CHECKS:
        from . import checks

        value = getattr(checks, name)
        globals()[name] = value
        return value
    if name in _DECLARATIVE:
        from . import declarative

        value = getattr(declarative, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rolloutgym' has no attribute {name!r}")
