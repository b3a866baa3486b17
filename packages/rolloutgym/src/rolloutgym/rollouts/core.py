"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.rollouts.core``."""

from rolloutgym_protocol.records import ActionT, ItemT, ObservationT

from . import (
    AsyncPolicy,
    Policy,
    PolicyOutput,
    RolloutError,
    Step,
    Trajectory,
    TrajectoryGroup,
    arollout,
    arollout_group,
    rollout,
    rollout_group,
)

__all__ = [
    "ActionT",
    "AsyncPolicy",
    "ItemT",
    "ObservationT",
    "Policy",
    "PolicyOutput",
    "RolloutError",
    "Step",
    "Trajectory",
    "TrajectoryGroup",
    "arollout",
    "arollout_group",
    "rollout",
    "rollout_group",
]
