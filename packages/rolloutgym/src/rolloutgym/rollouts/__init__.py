"""Rollout collection: episodes, groups, and the failure records they produce."""

from rolloutgym_protocol import AsyncPolicy, Policy, PolicyOutput, RolloutError, Step, Trajectory, TrajectoryGroup

from ._episode import arollout, bind_policy, rollout
from ._group import arollout_group, member_seeds, rollout_group

__all__ = [
    "AsyncPolicy",
    "Policy",
    "PolicyOutput",
    "RolloutError",
    "Step",
    "Trajectory",
    "TrajectoryGroup",
    "arollout",
    "arollout_group",
    "bind_policy",
    "member_seeds",
    "rollout",
    "rollout_group",
]
