"""Rollout collection: episodes, groups, and the failure records they produce.

The engine pieces executors build on are public: :func:`run_member` runs one group
member start to finish, :class:`GroupCollector` turns member outcomes into finished
groups, :func:`error_record` makes a member's failure record, :func:`aclose_env` closes
an env whose ``close()`` may be async, :class:`LoopTurns` tells a worker when its members
have kept the event loop from turning.
"""

from rolloutgym_protocol import AsyncPolicy, Policy, PolicyOutput, RolloutError, Step, Trajectory, TrajectoryGroup
from rolloutgym_protocol.records import ActionT, ItemT, ObservationT

from ._collector import GroupCollector
from ._episode import arollout, rollout
from ._group import LOOP_TURN_SECONDS, arollout_group, rollout_group, run_member
from ._member import aclose_env, error_record
from ._rules import EpisodeState, bind_policy, check_budgets
from ._seeds import member_seeds, planned_seeds
from ._tree import BRANCH_MODES, arollout_tree, branch_steps, rollout_tree
from ._turns import LoopTurns

__all__ = [
    "BRANCH_MODES",
    "LOOP_TURN_SECONDS",
    "ActionT",
    "AsyncPolicy",
    "EpisodeState",
    "GroupCollector",
    "ItemT",
    "LoopTurns",
    "ObservationT",
    "Policy",
    "PolicyOutput",
    "RolloutError",
    "Step",
    "Trajectory",
    "TrajectoryGroup",
    "aclose_env",
    "arollout",
    "arollout_group",
    "arollout_tree",
    "bind_policy",
    "branch_steps",
    "check_budgets",
    "error_record",
    "member_seeds",
    "planned_seeds",
    "rollout",
    "rollout_group",
    "rollout_tree",
    "run_member",
]
