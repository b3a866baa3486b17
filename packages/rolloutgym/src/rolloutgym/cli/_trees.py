"""``rolloutgym show RUN --tree``: each task's rollout tree (a run of ``rolloutgym run --branch-at``).

One line for the trunk, one per branch step (how many branches, their mean reward, how many
passed), and the branches themselves when a step has few of them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

__all__ = ["print_trees", "tree_of"]

_LEAVES_SHOWN = 8  # per branch step; more are summarised only


def _ending(trajectory: Any) -> str:
    return f"{len(trajectory.steps)} steps, reward {trajectory.score.value:.3f} ({trajectory.stop_reason or '-'})"


def tree_of(group: Any, pass_threshold: float = 1.0) -> Tree | None:
    """The group's tree for the terminal, or None when the group is not a rollout tree."""
    trajectories = list(group.trajectories)
    if not trajectories or "tree" not in group.metadata:
        return None
    trunk, branches = trajectories[0], trajectories[1:]
    tree = Tree(Text(f"{group.item_id}  trunk: {_ending(trunk)}"))
    by_step: dict[int, list[Any]] = defaultdict(list)
    for branch in branches:
        by_step[int(branch.metadata["branch"]["at"])].append(branch)
    for at in sorted(by_step):
        members = by_step[at]
        rewards = [member.score.value for member in members]
        passed = sum(reward >= pass_threshold for reward in rewards)
        node = tree.add(
            Text(
                f"step {at}: {len(members)} branches, mean reward {sum(rewards) / len(rewards):.3f}, "
                f"{passed} passed (trunk's step {at}: {_action_text(trunk, at)})"
            )
        )
        if len(members) <= _LEAVES_SHOWN:
            for member in members:
                label = member.metadata["branch"]["id"]
                node.add(Text(f"{label}: {_action_text(member, at)} -> {_ending(member)}"))
    for error in group.errors:
        tree.add(Text(f"member {error.member} failed [{error.where}] {error.error_message[:120]}", style="red"))
    return tree


def _action_text(trajectory: Any, at: int) -> str:
    if at >= len(trajectory.steps):
        return "none"
    action = trajectory.steps[at].action
    calls = action.get("tool_calls") if isinstance(action, dict) else None
    if calls:
        names = [
            str(call.get("name") or call.get("function", {}).get("name")) for call in calls if isinstance(call, dict)
        ]
        return ("calls " + ", ".join(names))[:80]
    text = action.get("content") if isinstance(action, dict) else action
    return repr(str(text))[:60]


def print_trees(path: Path, console: Console, *, pass_threshold: float = 1.0, allow_partial_tail: bool = False) -> int:
    """Print the tree of every rollout-tree group in the run file; return how many were printed."""
    from ..runs import iter_run

    shown = 0
    for _, group in iter_run(path, allow_partial_tail=allow_partial_tail):
        tree = tree_of(group, pass_threshold)
        if tree is not None:
            console.print(tree)
            shown += 1
    return shown
