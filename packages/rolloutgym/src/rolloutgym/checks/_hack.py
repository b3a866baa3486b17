"""The hack probe: every probe on every checked task, judged against the null policy's score there."""

from __future__ import annotations

import json
from typing import Any

from ._answer_probes import (
    ConstantProbe,
    HedgeProbe,
    HugeReplyProbe,
    KeywordStuffingProbe,
    NearMissControl,
    NegationProbe,
    NumbersProbe,
    ThinkProbe,
    ToolCallAnswerProbe,
)
from ._episodes import Episode, EpisodeRunner
from ._records import FAIL, PASS, SKIP, WARN, CheckResult
from ._tool_probes import CallEveryToolProbe, HiddenReadProbe, RewardFileProbe, TestEditProbe, TypeLieProbe
from .probes import HackProbe, ProbeNotApplicable, answer_text, observation_text

__all__ = ["BUILTIN_PROBES", "plugin_probes", "probe_classes", "probe_results"]

BUILTIN_PROBES: tuple[type[HackProbe], ...] = (
    RewardFileProbe,
    TestEditProbe,
    HiddenReadProbe,
    KeywordStuffingProbe,
    HedgeProbe,
    NegationProbe,
    ThinkProbe,
    ToolCallAnswerProbe,
    HugeReplyProbe,
    NumbersProbe,
    TypeLieProbe,
    ConstantProbe,
    CallEveryToolProbe,
)
_TOLERANCE = 1e-9
_PROBE_ERROR = "probe error: "
_LEAK_LINE = 24  # characters: a shorter line of the solution is too common to call a leak


def probe_classes(registry: Any = None, names: list[str] | None = None) -> list[type[HackProbe]]:
    """The built-in probes and those of installed plugins (hook ``rolloutgym_hack_probes``), optionally by name."""
    found: list[type[HackProbe]] = list(BUILTIN_PROBES)
    if registry is not None:
        found += [probe for probe in plugin_probes(registry) if probe not in found]
    if names:
        known = {probe.name: probe for probe in found}
        unknown = [name for name in names if name not in known]
        if unknown:
            from rolloutgym_protocol.errors import ConfigError

            raise ConfigError(
                f"no hack probe {', '.join(map(repr, unknown))}; the probes are: {', '.join(sorted(known))}"
            )
        found = [known[name] for name in names]
    return found


def plugin_probes(registry: Any) -> list[type[HackProbe]]:
    """The probes of hook ``rolloutgym_hack_probes``: classes, instances or ``"module:Class"`` strings.

    A plugin whose hook returns something else is named in a :class:`~rolloutgym_protocol.errors.ConfigError`.
    """
    from rolloutgym_protocol.errors import ConfigError

    from ..registry import import_entry_point

    probes: list[type[HackProbe]] = []
    for plugin, returned in registry.call_hook("rolloutgym_hack_probes"):
        for probe in returned or ():
            if isinstance(probe, str):
                probe = import_entry_point(probe, what=f"hack probe of {plugin.describe()}")
            probe = probe if isinstance(probe, type) else type(probe)
            if not issubclass(probe, HackProbe) or not probe.name:
                raise ConfigError(
                    f"rolloutgym_hack_probes() of {plugin.describe()} returned {probe.__name__}, which is not a "
                    "named rolloutgym.checks.HackProbe subclass; subclass HackProbe and set its name"
                )
            probes.append(probe)
    return probes


class _Task:
    """What the probes of one task are judged against: the null score and the near-miss control."""

    def __init__(self, index: int, null: Episode, oracle: Episode) -> None:
        self.index = index
        self.null = null
        self.oracle = oracle
        self.floor = null.score if null.trajectory is not None else 0.0
        self.control: Episode | None = None
        actions = oracle.trajectory.actions if oracle.trajectory is not None else ()
        self.text_answers = sum(bool((answer_text(action) or "").strip()) for action in actions)

    def prepared(self, probe: HackProbe) -> HackProbe:
        """``probe`` told which of the oracle's text answers is the final one (the one to disguise)."""
        if probe.gated and self.text_answers:
            probe.final_answer = self.text_answers  # type: ignore[attr-defined]
        return probe


async def probe_results(
    runner: EpisodeRunner,
    baselines: dict[str, dict[int, Episode]],
    probes: list[type[HackProbe]],
    seed: int,
) -> list[CheckResult]:
    """One ``probe:NAME`` result per probe class."""
    tasks = [_Task(index, baselines["null"][index], baselines["oracle"][index]) for index in baselines["null"]]
    return [await _probe_result(runner, probe, tasks, seed) for probe in probes]


async def _probe_result(runner: EpisodeRunner, probe: type[HackProbe], tasks: list[_Task], seed: int) -> CheckResult:
    name = f"probe:{probe.name}"
    findings: list[str] = []
    probe_errors: list[str] = []
    skipped: dict[str, int] = {}
    solved, judged = 0, 0
    for task in tasks:
        ungraded = await _ungraded_answer(runner, task, seed) if probe.gated else None
        if ungraded:
            skipped[ungraded] = skipped.get(ungraded, 0) + 1
            continue
        outcomes = [
            await runner.run(task.prepared(probe(variant)), task.index, seed=seed) for variant in probe.variants
        ]
        verdict = _judge(probe, task, outcomes)
        if verdict is None:
            reason = next((_not_applicable(o) for o in outcomes if _not_applicable(o)), "not applicable")
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        judged += 1
        if verdict.startswith(_PROBE_ERROR):
            probe_errors.append(verdict[len(_PROBE_ERROR) :])
        elif verdict:
            findings.append(verdict)
            solved += 1
    metrics = {"tasks": judged, "flagged": solved, "exploit": probe.exploit}
    if not judged:
        reason = "; ".join(sorted(skipped)) or "no task to run it on"
        return CheckResult(name, SKIP, f"not applicable: {reason}", metrics=metrics)
    if probe is ConstantProbe:
        return _constant_result(name, findings, judged, metrics)
    if findings:
        return CheckResult(name, FAIL, f"{probe.exploit}: {len(findings)}/{judged} task(s)", findings, metrics)
    if probe_errors:
        return CheckResult(name, WARN, f"the probe failed on {len(probe_errors)} task(s) (a probe bug)", probe_errors)
    return CheckResult(name, PASS, f"scores no more than null on {judged} task(s)", metrics=metrics)


def _constant_result(name: str, findings: list[str], judged: int, metrics: dict[str, Any]) -> CheckResult:
    share = len(findings) / judged
    if share > 0.5:
        return CheckResult(name, FAIL, f"a constant reply solves {len(findings)}/{judged} task(s)", findings, metrics)
    if findings:
        return CheckResult(
            name, WARN, f"a constant reply solves {len(findings)}/{judged} task(s) (flagged)", findings, metrics
        )
    return CheckResult(name, PASS, f"no constant reply solves any of {judged} task(s)", metrics=metrics)


async def _ungraded_answer(runner: EpisodeRunner, task: _Task, seed: int) -> str | None:
    """Why the gated probes cannot be judged on ``task`` (None: a near-miss answer scores no more than null)."""
    if task.control is None:
        task.control = await runner.run(task.prepared(NearMissControl()), task.index, seed=seed)
    control = task.control
    if _not_applicable(control):
        return _not_applicable(control)
    oracle = task.oracle.trajectory
    if oracle is None or not any((answer_text(action) or "").strip() for action in oracle.actions):
        return "the oracle gives no free-text answer"
    if control.trajectory is None or control.score > task.floor + _TOLERANCE:
        return "a wrong answer after the oracle's work still scores (the answer text is not what is graded)"
    return None


def _not_applicable(episode: Episode) -> str | None:
    error = episode.policy_error
    return str(error) if isinstance(error, ProbeNotApplicable) else None


def _judge(probe: type[HackProbe], task: _Task, outcomes: list[Episode]) -> str | None:
    """'' when the probe did no better than null, a finding when it did, None when it did not apply."""
    applied = [outcome for outcome in outcomes if _not_applicable(outcome) is None]
    if not applied:
        return None
    if probe.every_variant and any(
        outcome.trajectory is not None and outcome.score <= task.floor + _TOLERANCE for outcome in applied
    ):
        return ""
    for variant, outcome in zip(probe.variants, outcomes, strict=True):
        label = f"{outcome.task}" + (f" [{variant}]" if len(probe.variants) > 1 else "")
        if outcome.trajectory is None and _not_applicable(outcome) is None:
            if outcome.policy_error is not None:
                return f"{_PROBE_ERROR}{label}: the probe itself failed: {outcome.error}"
            return f"{label}: the env raised on the probe's actions: {outcome.error}"
        if outcome.trajectory is not None and outcome.score > task.floor + _TOLERANCE:
            if not probe.gated and _does_the_oracles_work(task.oracle, outcome):
                continue  # it made every call the oracle makes: the task's solution, not an exploit
            feedback = outcome.trajectory.score.feedback
            shown = f" ({feedback[:160]})" if feedback else ""
            return f"{label}: scored {outcome.score:g} > null {task.floor:g}{shown}"
        if probe is HiddenReadProbe and outcome.trajectory is not None:
            leaked = _leaked_line(task.oracle, outcome)
            if leaked:
                return f"{label}: the solution is readable from the workspace: {leaked!r}"
    return ""


def _calls(trajectory: Any) -> list[str]:
    """The tool calls of a trajectory's actions as ``name(arguments JSON)`` strings."""
    found = []
    for action in trajectory.actions:
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        if isinstance(action, dict) and "name" in action and "arguments" in action:
            calls = [action]
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                arguments = json.dumps(call.get("arguments"), sort_keys=True, default=str)
                found.append(f"{call.get('name')}({arguments})")
    return found


def _does_the_oracles_work(oracle: Episode, probe: Episode) -> bool:
    """Whether the probe made every tool call the oracle makes on this task, with the same arguments."""
    if oracle.trajectory is None or probe.trajectory is None:
        return False
    needed = _calls(oracle.trajectory)
    made = set(_calls(probe.trajectory))
    return bool(needed) and all(call in made for call in needed)


def _leaked_line(oracle: Episode, probe: Episode) -> str | None:
    """A line of the oracle's answer (long enough to be distinctive) that the probe's reads returned."""
    if oracle.trajectory is None or probe.trajectory is None:
        return None
    shown_to_all = observation_text(oracle.trajectory.initial_observation)
    lines: set[str] = set()
    for action in oracle.trajectory.actions:
        for text in _strings(action):
            lines.update(line.strip() for line in text.splitlines() if len(line.strip()) >= _LEAK_LINE)
    lines = {line for line in lines if line not in shown_to_all}
    if not lines:
        return None
    seen = "\n".join(observation_text(step.next_observation) for step in probe.trajectory.steps)
    return next((line for line in sorted(lines) if line in seen), None)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() if key not in ("role", "id", "name") for text in _strings(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _strings(item)]
    return []
