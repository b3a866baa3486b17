"""Summaries of a run: pass rate, mean reward, pass@k and pass^k, errors, turns, tokens, time.

A trajectory *passes* when its score value reaches the run's ``pass_threshold``
(default 1.0). Failed members (``RolloutError``) are not trajectories: they are counted
under ``errors`` and left out of pass rates and rewards, never scored as 0. Trajectories that
ended before the model spoke (``stop_reason`` in :data:`UNANSWERED_STOP_REASONS`: the first
prompt did not fit in ``max_seq_len``) are not answers either: they are counted under
``num_prompt_too_long`` and left out of pass rates and rewards the same way.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.attribution import ATTRIBUTION_KEY, PARTIES

__all__ = [
    "UNANSWERED_STOP_REASONS",
    "GroupFacts",
    "RunSummary",
    "SummaryBuilder",
    "TaskSummary",
    "group_facts",
    "line_facts",
    "party_tuple",
    "pass_at_k",
    "pass_hat_k",
    "summarize",
    "summary_ks",
]


UNANSWERED_STOP_REASONS = frozenset({"prompt_too_long"})
"""Stop reasons of episodes that ended before the model spoke: no answer, so no score to count."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k draws (of n, c correct) passes."""
    if k > n or n == 0:
        return float("nan")
    return _curves(n, c, [k])[k][0]


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k draws pass (consistency, as in tau-bench)."""
    if k > n or n == 0:
        return float("nan")
    return _curves(n, c, [k])[k][1]


def summary_ks(n: int) -> list[int]:
    """The k of a summary's pass@k and pass^k for groups of ``n``: the powers of two up to n, and n."""
    ks = [1 << power for power in range(n.bit_length()) if 1 << power <= n]
    return ks + [n] if n and ks[-1] != n else ks


def _curves(n: int, c: int, ks: Sequence[int]) -> dict[int, tuple[float, float]]:
    """``{k: (pass@k, pass^k)}`` for n draws with c correct, in one pass of products (O(max k), no big integers).

    pass@k = 1 - prod_{i<k} (n-c-i)/(n-i) (no failure-only draw) and pass^k = prod_{i<k} (c-i)/(n-i):
    each factor is at most 1, so the running products never overflow and lose no precision to cancellation.
    """
    wanted = set(ks)
    result: dict[int, tuple[float, float]] = {}
    all_fail = all_pass = 1.0
    for i in range(max(ks, default=0)):
        all_fail *= max(n - c - i, 0) / (n - i)
        all_pass *= max(c - i, 0) / (n - i)
        if i + 1 in wanted:
            result[i + 1] = (1.0 - all_fail, all_pass)
    return result


def _pass_tables(tasks: Sequence[TaskSummary], n: int) -> tuple[dict[int, float], dict[int, float]]:
    """Mean pass@k and pass^k over tasks for k in :func:`summary_ks` (tasks with fewer than k draws left out).

    Linear in the number of rollouts: one pass of products per distinct (draws, passes) pair.
    """
    ks = summary_ks(n)
    pairs = Counter((task.trajectories, task.passes) for task in tasks)
    at: dict[int, float] = dict.fromkeys(ks, 0.0)
    hat: dict[int, float] = dict.fromkeys(ks, 0.0)
    counted: dict[int, int] = dict.fromkeys(ks, 0)
    for (draws, correct), count in pairs.items():
        for k, (value_at, value_hat) in _curves(draws, correct, [k for k in ks if k <= draws]).items():
            at[k] += value_at * count
            hat[k] += value_hat * count
            counted[k] += count
    return (
        {k: at[k] / counted[k] if counted[k] else 0.0 for k in ks},
        {k: hat[k] / counted[k] if counted[k] else 0.0 for k in ks},
    )


@dataclass
class TaskSummary:
    task_id: str
    task_index: int
    trajectories: int
    passes: int
    mean_reward: float
    mean_turns: float
    errors: int

    @property
    def pass_rate(self) -> float:
        return self.passes / self.trajectories if self.trajectories else 0.0


@dataclass
class RunSummary:
    env_id: str
    policy: str
    num_tasks: int
    num_trajectories: int
    num_errors: int
    pass_rate: float
    mean_reward: float
    pass_at: dict[int, float]  # k: 1, 2, 4, ... up to the group size, and the group size (summary_ks)
    pass_hat: dict[int, float]
    errors_by_type: dict[str, int]
    mean_turns: float
    total_tokens: int
    generated_tokens: int
    total_seconds: float
    tasks: list[TaskSummary] = field(default_factory=list)
    error_examples: dict[str, str] = field(default_factory=dict)
    num_prompt_too_long: int = 0  # trajectories that ended before the model spoke (not in the rates)
    # Failed trajectories by the party their score's attribution names ("agent" when it names none);
    # {} when no trajectory of the run carries an attribution (rolloutgym_protocol.attribution).
    failures_by_party: dict[str, int] = field(default_factory=dict)
    attributed: int = 0  # trajectories whose score carries an attribution

    @property
    def agent_pass_rate(self) -> float:
        """The pass rate over trajectories whose failure (if any) is the agent's: non-agent failures left out."""
        others = sum(count for party, count in self.failures_by_party.items() if party != "agent")
        counted = self.num_trajectories - others
        return self.pass_rate * self.num_trajectories / counted if counted else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in self.__dict__.items() if key != "tasks"}
        data["tasks"] = [dict(task.__dict__, pass_rate=task.pass_rate) for task in self.tasks]
        return data


@dataclass(frozen=True)
class GroupFacts:
    """What :func:`summarize` reads of one group: a few numbers per trajectory.

    Readers that stream large run files (the report) keep these instead of the groups.
    """

    item_id: str
    scores: tuple[float, ...]
    turns: tuple[int, ...]
    errors: tuple[tuple[str, str, str], ...]  # (error type, where, message cut to 300 characters)
    total_tokens: int
    generated_tokens: int
    seconds: float
    unanswered: int = 0  # trajectories that ended before the model spoke (their scores are not in ``scores``)
    # Per score in ``scores``: the attribution's party (:func:`party_tuple`); ``()`` when none carries one,
    # ``"-"`` where a score carries none among others that do.
    parties: tuple[str, ...] = ()


def party_tuple(attributions: Sequence[Any]) -> tuple[str, ...] | None:
    """The ``GroupFacts.parties`` of answered scores' raw attributions (``None``: carries none).

    Returns ``None`` for an attribution that is malformed (the full validation names it).
    """
    if all(raw is None for raw in attributions):
        return ()
    parties = []
    for raw in attributions:
        if raw is None:
            parties.append("-")
            continue
        if (
            type(raw) is not dict
            or raw.get("party") not in PARTIES
            or type(raw.get("reason")) is not str
            or not raw["reason"].strip()
            or type(raw.get("evidence", "")) is not str
        ):
            return None
        parties.append(raw["party"])
    return tuple(parties)


def _score_attribution(score: Any) -> Any:
    metadata = score.get("metadata") if type(score) is dict else None
    return metadata.get(ATTRIBUTION_KEY) if type(metadata) is dict else None


def group_facts(group: TrajectoryGroup) -> GroupFacts:
    """The :class:`GroupFacts` of a finished group."""
    generated = total = 0
    for trajectory in group.trajectories:
        for step in trajectory.steps:
            if step.policy_tokens is not None:
                generated += len(step.policy_tokens)
                total += len(step.policy_tokens)
            if step.observation_tokens is not None:
                total += len(step.observation_tokens)
            if step.policy_tokens is None:
                # A server that returns no token ids (OpenAI-compatible APIs) still reports its
                # usage: count the tokens it billed for this turn.
                billed, counted = _usage_tokens(step.policy_info)
                generated += billed
                total += counted
    answered = [trajectory.stop_reason not in UNANSWERED_STOP_REASONS for trajectory in group.trajectories]
    parties = party_tuple(
        [score.metadata.get(ATTRIBUTION_KEY) for score, kept in zip(group.scores, answered, strict=True) if kept]
    )
    return GroupFacts(
        group.item_id,
        tuple(score.value for score, kept in zip(group.scores, answered, strict=True) if kept),
        tuple(len(trajectory.steps) for trajectory, kept in zip(group.trajectories, answered, strict=True) if kept),
        tuple((error.error_type, error.where, error.error_message[:300]) for error in group.errors),
        total,
        generated,
        sum(float(trajectory.metadata.get("elapsed_seconds", 0.0)) for trajectory in group.trajectories),
        answered.count(False),
        parties or (),
    )


def _usage_tokens(policy_info: Any) -> tuple[int, int]:
    """``(generated, total)`` billed in a step's ``policy_info["usage"]`` (servers that return no token ids)."""
    usage = policy_info.get("usage") if policy_info else None
    if not isinstance(usage, dict):
        return 0, 0
    completion, prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
    generated = completion if isinstance(completion, int) else 0
    return generated, generated + (prompt if isinstance(prompt, int) else 0)


_OPTIONAL_LIST = (list, type(None))


def line_facts(data: dict[str, Any]) -> GroupFacts | None:
    """The :class:`GroupFacts` of a group line's parsed JSON, read without building the group.

    Equal to ``group_facts(TrajectoryGroup.from_dict(data))``. ``None`` when the line needs
    the full reader: a field of the wrong type (the full validation names it), a score value
    or elapsed time in the tagged form (``{"$float": "nan"}``), scores missing or not one per
    trajectory. Fields the summary does not read are checked for their kind (dict, bool,
    number or list); the elements of token and logprob lists and score components are not.
    """
    item_id, trajectories, scores = data.get("item_id"), data.get("trajectories"), data.get("scores")
    errors = data.get("errors", ())
    if (
        type(item_id) is not str
        or type(trajectories) is not list
        or type(scores) is not list
        or len(scores) != len(trajectories)
        or type(errors) not in (list, tuple)
        or type(data.get("metadata", {})) is not dict
    ):
        return None
    values: list[float] = []
    turns: list[int] = []
    attributions: list[Any] = []
    generated = total = unanswered = 0
    seconds = 0.0
    for trajectory, score in zip(trajectories, scores, strict=True):
        if type(trajectory) is not dict or type(score) is not dict or type(score.get("metadata", _EMPTY)) is not dict:
            return None
        value = _finite(score.get("value"))
        if value is None:
            return None
        steps, metadata = trajectory.get("steps"), trajectory.get("metadata", {})
        stop_reason = trajectory.get("stop_reason")
        if (
            type(steps) is not list
            or type(metadata) is not dict
            or "initial_observation" not in trajectory
            or type(trajectory.get("terminated")) is not bool
            or type(trajectory.get("truncated")) is not bool
            or type(trajectory.get("initial_info", {})) is not dict
            or not (stop_reason is None or type(stop_reason) is str)
        ):
            return None
        elapsed = _finite(metadata.get("elapsed_seconds", 0.0))
        if elapsed is None:
            return None
        for step in steps:
            if not _plain_step(step):
                return None
            tokens, observed = step.get("policy_tokens"), step.get("observation_tokens")
            if tokens is not None:
                generated += len(tokens)
                total += len(tokens)
            else:
                billed, counted = _usage_tokens(step.get("policy_info"))
                generated += billed
                total += counted
            if observed is not None:
                total += len(observed)
        seconds += elapsed
        if stop_reason in UNANSWERED_STOP_REASONS:
            unanswered += 1
        else:
            values.append(value)
            turns.append(len(steps))
            attributions.append(_score_attribution(score))
    parties = party_tuple(attributions)
    if parties is None:
        return None
    failures = []
    for error in errors:
        if type(error) is not dict:
            return None
        kind, where, message = error.get("error_type"), error.get("where", "engine"), error.get("error_message")
        if type(kind) is not str or type(where) is not str or type(message) is not str:
            return None
        failures.append((kind, where, message[:300]))
    return GroupFacts(
        item_id, tuple(values), tuple(turns), tuple(failures), total, generated, seconds, unanswered, parties
    )


def _finite(value: Any) -> float | None:
    """A plain JSON number as a finite float; ``None`` for anything else (a bool, a tagged or huge value)."""
    if type(value) is float:
        return value if value - value == 0.0 else None
    if type(value) is int and -(1 << 1023) < value < (1 << 1023):
        return float(value)
    return None


def _plain_step(step: Any) -> bool:
    """Whether a step's fields have the kinds the run-file schema asks for (numbers, flags, lists, dicts)."""
    if type(step) is not dict or not _STEP_KEYS <= step.keys():
        return False
    get = step.get
    stop_reason = get("policy_stop_reason")
    return (
        _finite(step["reward"]) is not None
        and type(step["terminated"]) is bool
        and type(step["truncated"]) is bool
        and type(get("info", _EMPTY)) is dict
        and type(get("policy_info", _EMPTY)) is dict
        and type(get("policy_tokens")) in _OPTIONAL_LIST
        and type(get("observation_tokens")) in _OPTIONAL_LIST
        and type(get("policy_logprobs")) in _OPTIONAL_LIST
        and (stop_reason is None or type(stop_reason) is str)
    )


_STEP_KEYS = frozenset({"observation", "action", "reward", "next_observation", "terminated", "truncated"})
_EMPTY: dict[str, Any] = {}


class SummaryBuilder:
    """:func:`summarize`, one group at a time (what ``show`` and ``report`` stream a run file into).

    Keeps one :class:`TaskSummary` per task and each trajectory's reward (8 bytes), not the
    groups: memory grows with the number of tasks, not with the size of the run file.
    """

    def __init__(self, header: dict[str, Any] | None = None) -> None:
        self.header = header or {}
        self.threshold = float(self.header.get("pass_threshold", 1.0))
        self.tasks: list[TaskSummary] = []
        self.errors: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.failures_by_party: Counter[str] = Counter()
        self.attributed = 0
        self.rewards = array("d")  # every trajectory's score, summed once at the end as summarize did
        self.turns = self.passes = self.total_tokens = self.generated_tokens = self.unanswered = 0
        self.seconds = 0.0
        self.smallest: int | None = None

    def add(self, index: int, given: TrajectoryGroup | GroupFacts) -> TaskSummary:
        """Count one finished group (or its facts) of task ``index``; returns its :class:`TaskSummary`."""
        facts = given if isinstance(given, GroupFacts) else group_facts(given)
        values = facts.scores
        group_turns = facts.turns
        threshold = self.threshold
        task_passes = sum(value >= threshold for value in values)
        if facts.parties:
            self._count_parties(values, facts.parties)
        for error_type, where, message in facts.errors:
            self.errors[error_type] += 1
            self.examples.setdefault(error_type, f"[{where}] {message}"[:300])
        task = TaskSummary(
            facts.item_id,
            index,
            len(values),
            task_passes,
            sum(values) / len(values) if values else 0.0,
            sum(group_turns) / len(group_turns) if group_turns else 0.0,
            len(facts.errors),
        )
        self.tasks.append(task)
        self.rewards.extend(values)
        self.turns += sum(group_turns)
        self.passes += task_passes
        self.smallest = len(values) if self.smallest is None else min(self.smallest, len(values))
        self.total_tokens += facts.total_tokens
        self.generated_tokens += facts.generated_tokens
        self.seconds += facts.seconds
        self.unanswered += facts.unanswered
        return task

    def _count_parties(self, values: Sequence[float], parties: Sequence[str]) -> None:
        for value, party in zip(values, parties, strict=True):
            self.attributed += party != "-"
            if value < self.threshold:
                self.failures_by_party["agent" if party == "-" else party] += 1

    def summary(self) -> RunSummary:
        """The :class:`RunSummary` of the groups added so far."""
        header, rewards, count = self.header, self.rewards, len(self.rewards)
        pass_at, pass_hat = _pass_tables(self.tasks, self.smallest or 0)
        return RunSummary(
            env_id=header.get("env", {}).get("id", "?"),
            policy=header.get("policy", "?"),
            num_tasks=len(self.tasks),
            num_trajectories=count,
            num_errors=sum(self.errors.values()),
            pass_rate=self.passes / count if count else 0.0,
            mean_reward=sum(rewards) / count if count else 0.0,
            pass_at=pass_at,
            pass_hat=pass_hat,
            errors_by_type=dict(self.errors),
            mean_turns=self.turns / count if count else 0.0,
            total_tokens=self.total_tokens,
            generated_tokens=self.generated_tokens,
            total_seconds=self.seconds,
            tasks=list(self.tasks),
            error_examples=dict(self.examples),
            num_prompt_too_long=self.unanswered,
            failures_by_party=self._party_table(),
            attributed=self.attributed,
        )

    def _party_table(self) -> dict[str, int]:
        """Failures per party (every failure counted, the unattributed ones as the agent's); {} without attributions."""
        if not self.attributed:
            return {}
        failed = self.num_trajectories_failed()
        others = sum(count for party, count in self.failures_by_party.items() if party != "agent")
        table = {party: self.failures_by_party.get(party, 0) for party in PARTIES}
        table["agent"] = failed - others
        return table

    def num_trajectories_failed(self) -> int:
        return len(self.rewards) - self.passes


def summarize(
    groups: Sequence[TrajectoryGroup | GroupFacts],
    *,
    header: dict[str, Any] | None = None,
    task_indices: Sequence[int] | None = None,
) -> RunSummary:
    """Summarise finished groups or their :class:`GroupFacts` (the header supplies env, policy and threshold)."""
    indices = list(task_indices) if task_indices is not None else list(range(len(groups)))
    builder = SummaryBuilder(header)
    for index, given in zip(indices, groups, strict=True):
        builder.add(index, given)
    return builder.summary()
