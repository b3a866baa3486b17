"""Environments: the protocol's env contracts, adapters, wrappers and checkers."""

from rolloutgym_protocol import (
    AsyncActionWrapper,
    AsyncEnv,
    AsyncFromSync,
    AsyncObservationWrapper,
    AsyncRewardWrapper,
    AsyncSingleTurnEnv,
    AsyncWrapper,
    Env,
    EvaluationResult,
    SingleTurnEnv,
    SyncFromAsync,
    as_async,
    as_sync,
    check_async_env,
    check_env,
)

from ..graders.wrappers import AsyncGradingWrapper, GradingWrapper

__all__ = [
    "AsyncActionWrapper",
    "AsyncEnv",
    "AsyncFromSync",
    "AsyncGradingWrapper",
    "AsyncObservationWrapper",
    "AsyncRewardWrapper",
    "AsyncSingleTurnEnv",
    "AsyncWrapper",
    "Env",
    "EvaluationResult",
    "GradingWrapper",
    "SingleTurnEnv",
    "SyncFromAsync",
    "as_async",
    "as_sync",
    "check_async_env",
    "check_env",
]
