"""rolloutgym-protocol: the stable contracts shared by rolloutgym and its plugins."""

from importlib.metadata import PackageNotFoundError, version

from . import attribution, display, errors, forking, hookspecs, jsonvalues, spaces, specs
from .adapters import AsyncFromSync, SyncFromAsync, as_async, as_sync
from .attribution import Attribution, attribute, attribution_of
from .checks import check_async_env, check_env
from .envs import AsyncEnv, AsyncSingleTurnEnv, Env, EvaluationResult, SingleTurnEnv, validate_step_result
from .errors import RolloutGymError
from .forking import AsyncForkableEnv, EnvState, ForkableEnv, afork, arestore, asnapshot, can_fork
from .hookspecs import hookimpl
from .jsonvalues import from_jsonable, to_jsonable
from .policies import AsyncPolicy, EnvAwarePolicy, Policy, PolicyOutput
from .records import RolloutError, Step, Trajectory, TrajectoryGroup
from .scores import Criterion, Grader, Rubric, Score, ScoreValue
from .specs import (
    BenchmarkSpec,
    EnvSpec,
    ExporterSpec,
    GraderSpec,
    PolicySpec,
    SandboxProviderSpec,
    TemplateSpec,
    parse_env_id,
)
from .types import Chat, Message, ToolCall
from .wrappers import AsyncActionWrapper, AsyncObservationWrapper, AsyncRewardWrapper, AsyncWrapper, find_attribute

try:
    __version__ = version("rolloutgym-protocol")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "AsyncActionWrapper",
    "AsyncEnv",
    "AsyncForkableEnv",
    "AsyncFromSync",
    "AsyncObservationWrapper",
    "AsyncPolicy",
    "AsyncRewardWrapper",
    "AsyncSingleTurnEnv",
    "AsyncWrapper",
    "Attribution",
    "Chat",
    "Criterion",
    "Env",
    "EnvAwarePolicy",
    "BenchmarkSpec",
    "EnvSpec",
    "EnvState",
    "EvaluationResult",
    "ExporterSpec",
    "ForkableEnv",
    "Grader",
    "GraderSpec",
    "Message",
    "Policy",
    "PolicyOutput",
    "PolicySpec",
    "SandboxProviderSpec",
    "RolloutError",
    "RolloutGymError",
    "Rubric",
    "Score",
    "ScoreValue",
    "SingleTurnEnv",
    "Step",
    "SyncFromAsync",
    "TemplateSpec",
    "ToolCall",
    "Trajectory",
    "TrajectoryGroup",
    "__version__",
    "afork",
    "arestore",
    "asnapshot",
    "attribute",
    "attribution",
    "attribution_of",
    "can_fork",
    "as_async",
    "as_sync",
    "check_async_env",
    "check_env",
    "display",
    "errors",
    "find_attribute",
    "forking",
    "from_jsonable",
    "hookimpl",
    "hookspecs",
    "jsonvalues",
    "parse_env_id",
    "spaces",
    "specs",
    "to_jsonable",
    "validate_step_result",
]
