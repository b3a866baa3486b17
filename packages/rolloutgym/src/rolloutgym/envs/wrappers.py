"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.envs.wrappers`` (async and grading wrappers)."""

from rolloutgym_protocol.wrappers import (
    ActT,
    AsyncActionWrapper,
    AsyncObservationWrapper,
    AsyncRewardWrapper,
    AsyncWrapper,
    ObsT,
    WrapperActT,
    WrapperObsT,
)

from ..graders.wrappers import AsyncGradingWrapper, GradingWrapper, InputT, RubricT

__all__ = [
    "ActT",
    "AsyncActionWrapper",
    "AsyncGradingWrapper",
    "AsyncObservationWrapper",
    "AsyncRewardWrapper",
    "AsyncWrapper",
    "GradingWrapper",
    "InputT",
    "ObsT",
    "RubricT",
    "WrapperActT",
    "WrapperObsT",
]
