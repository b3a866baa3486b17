"""What every exporter needs: trajectories with their group, reward, advantage and chat."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol import Score, Trajectory, TrajectoryGroup
from rolloutgym_protocol.display import json_text, safe_repr
from rolloutgym_protocol.errors import ConfigError

from ..llm.messages import content_text, observation_messages, to_openai_messages
from ..mixtures import env_of_group
from ..runs import Run
from ..runs.stats import UNANSWERED_STOP_REASONS

__all__ = [
    "ExportRecord",
    "as_bool",
    "as_float",
    "conversation",
    "group_advantages",
    "iter_records",
    "open_output",
    "pass_threshold",
    "penalized_reward",
    "trajectory_tools",
    "write_jsonl",
]


@dataclass(frozen=True)
class ExportRecord:
    """One trajectory of a run, with what training needs to know about it."""

    env_id: str
    task_id: str
    member: int
    trajectory: Trajectory
    score: Score
    reward: float
    advantage: float
    group: TrajectoryGroup


def as_float(options: dict[str, Any], key: str, default: float) -> float:
    value = options.pop(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"export option {key}={value!r} must be a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"export option {key}={value!r} must be finite")
    return number


def as_bool(options: dict[str, Any], key: str, default: bool) -> bool:
    value = options.pop(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
        return value.lower() in ("true", "1", "yes")
    raise ConfigError(f"export option {key}={value!r} must be true or false")


def check_no_options(format_name: str, options: dict[str, Any], known: tuple[str, ...]) -> None:
    if options:
        raise ConfigError(
            f"the '{format_name}' exporter does not know option(s) {', '.join(sorted(options))}; "
            f"its options are: {', '.join(known) or 'none'}"
        )


def pass_threshold(run: Run, options: dict[str, Any]) -> float:
    """``min_score`` from the options, else the run's ``pass_threshold`` (default 1.0)."""
    default = run.header.get("pass_threshold", 1.0)
    return as_float(options, "min_score", float(default if default is not None else 1.0))


def penalized_reward(trajectory: Trajectory, reward: float, penalty: float) -> float:
    """``reward`` minus ``penalty`` per invalid action the policy recorded."""
    if not penalty or not trajectory.steps:
        return reward
    count = trajectory.steps[-1].policy_info.get("invalid_action_count", 0) or 0
    return reward - penalty * float(count)


def group_advantages(rewards: list[float], *, normalize: bool) -> list[float]:
    """Group-relative advantages: reward minus the group mean (divided by the std when
    ``normalize``; a group whose rewards are all equal gets zeros)."""
    if not rewards:
        return []
    mean = sum(rewards) / len(rewards)
    centred = [reward - mean for reward in rewards]
    if not normalize:
        return centred
    deviation = math.sqrt(sum(value * value for value in centred) / len(centred))
    return [value / deviation if deviation > 1e-8 else 0.0 for value in centred]


def iter_records(run: Run, *, invalid_action_penalty: float = 0.0, normalize: bool = False) -> Iterator[ExportRecord]:
    """Every answered trajectory of ``run`` with its (penalised) reward and group advantage.

    Trajectories that ended before the model spoke (``stop_reason="prompt_too_long"``) are
    left out: their score is not a reward for anything the model did (as in the run summary).
    """
    for group in run.groups:
        env_id = env_of_group(group, run.header)  # each group's own env in a --mix run
        kept = [
            (index, trajectory, score)
            for index, (trajectory, score) in enumerate(zip(group.trajectories, group.scores, strict=True))
            if trajectory.stop_reason not in UNANSWERED_STOP_REASONS
        ]
        rewards = [penalized_reward(trajectory, score.value, invalid_action_penalty) for _, trajectory, score in kept]
        advantages = group_advantages(rewards, normalize=normalize)
        for position, (index, trajectory, score) in enumerate(kept):
            member = trajectory.metadata.get("member", index)
            yield ExportRecord(
                env_id, group.item_id, int(member), trajectory, score, rewards[position], advantages[position], group
            )


def trajectory_tools(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The tool definitions the policy saw (recorded by the LLM loop on the first turn)."""
    if trajectory.steps:
        tools = trajectory.steps[0].policy_info.get("tools")
        if isinstance(tools, list):
            return [tool for tool in tools if isinstance(tool, dict)]
    return []


def _assistant_message(action: Any) -> dict[str, Any]:
    if isinstance(action, dict) and action.get("role") == "assistant":
        message = {"role": "assistant", "content": content_text(action.get("content"))}
        if action.get("tool_calls"):
            message["tool_calls"] = action["tool_calls"]
        return message
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    return {"role": "assistant", "content": json_text(action, default=safe_repr)}


def conversation(trajectory: Trajectory, *, openai_format: bool = True) -> list[dict[str, Any]]:
    """The trajectory as a chat: observations and actions in order, ending on the last
    assistant message (the final observation, e.g. a grader's reply, is not included).

    Steps where the policy ended the episode without sampling (``max_turns``,
    ``max_seq_len``) are left out.
    """
    messages = (
        observation_messages(trajectory.initial_observation)
        if trajectory.initial_observation not in (None, [], "")
        else []
    )
    for step in trajectory.steps:
        if step.policy_info.get("ended_by"):
            break
        messages.append(_assistant_message(step.action))
        if step.next_observation not in (None, [], ""):
            messages.extend(observation_messages(step.next_observation))
    while messages and messages[-1]["role"] != "assistant":
        messages.pop()
    return to_openai_messages(messages) if openai_format else messages


def open_output(out_path: str | Path) -> Path:
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def write_jsonl(out_path: str | Path, rows: Iterator[dict[str, Any]], *, what: str) -> Path:
    """Write ``rows`` as JSON lines; refuse to write an empty file silently."""
    out = open_output(out_path)
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json_text(row) + "\n")  # any value (an int too long to print: as text)
            count += 1
    if count == 0:
        out.unlink()
        raise ConfigError(f"nothing to export: the run has no {what}")
    return out
