"""``rolloutgym.check(ENV)``: run the card's checks on one env and gather the report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..sources import EnvSource, resolve_env
from ._basic import ceiling_result, determinism_result, floor_result, run_baselines
from ._episodes import EpisodeRunner, sample_indices
from ._hack import probe_classes, probe_results
from ._records import FAIL, KNOWN, SKIP, CheckReport, CheckResult

__all__ = ["ALL_CHECKS", "DEFAULT_CHECKS", "check"]

ALL_CHECKS = ("ceiling", "floor", "determinism", "probe", "lint", "signal", "containment")
DEFAULT_CHECKS = ("ceiling", "floor", "determinism", "probe", "lint", "containment")


def check(
    reference: str,
    *,
    sample: int | None = 10,
    seed: int = 0,
    checks: Iterable[str] | None = None,
    probes: list[str] | None = None,
    max_score: float = 1.0,
    min_score: float = 0.0,
    null_exempt: Iterable[str] = (),
    waivers: Mapping[str, str] | None = None,
    signal_policy: str = "random",
    signal_k: int = 4,
    env_kwargs: Mapping[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    registry: Any = None,
) -> CheckReport:
    """Check an env: ceiling, floor, determinism, the hack probe, a static lint, containment (and signal).

    Args:
        reference: a registered id, an env file, a folder of tasks (Harbor) or a ``rolloutgym serve`` URL.
        sample: how many tasks the episode checks run on (a seeded sample); None: every task.
        seed: seeds the sample and every episode.
        checks: which checks to run (:data:`ALL_CHECKS`); default :data:`DEFAULT_CHECKS`
            (``signal`` runs a policy ``signal_k`` times per task: ask for it).
        probes: only these hack probes (by name); default every built-in and plugin probe.
        max_score: the score the oracle must reach; ``min_score``: the most null may score.
        null_exempt: task ids whose right answer is to do nothing (null may score on them).
        waivers: ``{check name: reason}``: a failure of that check is reported as a known failure
            with the reason (it does not fail the card).
        signal_policy: the policy of the ``signal`` check; ``signal_k``: its samples per task.
        env_kwargs: factory keyword arguments of the env.
        max_steps: step budget per episode (default: the env's).
        timeout: wall-clock budget per episode in seconds (default: the env's, else 300).
        registry: where ids, templates and plugin probes are looked up (default: the process-wide one).

    Returns:
        The :class:`CheckReport`; ``report.ok`` is False when a check failed.
    """
    chosen = tuple(checks) if checks is not None else DEFAULT_CHECKS
    unknown = [name for name in chosen if name not in ALL_CHECKS]
    if unknown:
        raise ConfigError(f"no check {', '.join(map(repr, unknown))}; the checks are: {', '.join(ALL_CHECKS)}")
    if sample is not None and sample < 1:
        raise ConfigError(f"sample must be at least 1 (or None for every task), got {sample}")
    if registry is None:
        from ..registry import get_registry

        registry = get_registry()
    started = time.perf_counter()
    resolved = resolve_env(EnvSource(reference, dict(env_kwargs or {})), registry)
    runner = EpisodeRunner(resolved, max_steps=max_steps, timeout=timeout)
    indices = sample_indices(len(resolved.tasks), sample, seed)
    report = CheckReport(resolved.env_id, reference, [runner.task_id(index) for index in indices], len(resolved.tasks))
    options = _Options(chosen, probes, max_score, min_score, set(map(str, null_exempt)), signal_policy, signal_k)
    report.results = asyncio.run(_run_checks(runner, indices, seed, options, registry, reference))
    _apply_waivers(report, dict(waivers or {}))
    report.seconds = time.perf_counter() - started
    return report


class _Options:
    def __init__(
        self,
        checks: tuple[str, ...],
        probes: list[str] | None,
        max_score: float,
        min_score: float,
        null_exempt: set[str],
        signal_policy: str,
        signal_k: int,
    ) -> None:
        self.checks = checks
        self.probes = probes
        self.max_score = max_score
        self.min_score = min_score
        self.null_exempt = null_exempt
        self.signal_policy = signal_policy
        self.signal_k = signal_k


async def _run_checks(
    runner: EpisodeRunner, indices: list[int], seed: int, options: _Options, registry: Any, reference: str
) -> list[CheckResult]:
    results: list[CheckResult] = []
    wanted = set(options.checks)
    if "lint" in wanted:
        from ._lint import lint_results

        results.extend(await asyncio.to_thread(lint_results, runner.resolved, reference))
    episode_checks = wanted & {"ceiling", "floor", "determinism", "probe"}
    if episode_checks:
        baselines = await run_baselines(runner, indices, seed)
        if "ceiling" in wanted:
            results.append(ceiling_result(baselines["oracle"], options.max_score))
        if "floor" in wanted:
            results.append(floor_result(baselines["null"], options.min_score, options.null_exempt, baselines["oracle"]))
        if "determinism" in wanted and indices:
            first = indices[0]
            results.append(await determinism_result(runner, first, baselines["oracle"][first], seed))
        if "probe" in wanted:
            classes = probe_classes(registry, options.probes)
            results.extend(await probe_results(runner, baselines, classes, seed))
    if "signal" in wanted:
        from ._signal import signal_result

        results.append(await signal_result(runner, indices, options.signal_policy, options.signal_k, seed, registry))
    if "containment" in wanted:
        from ._containment import containment_result

        results.append(await containment_result(runner, indices[:1]))
    return results


def _apply_waivers(report: CheckReport, waivers: dict[str, str]) -> None:
    for result in report.results:
        reason = waivers.get(result.name)
        if reason and result.status == FAIL:
            result.status, result.reason = KNOWN, reason
        elif reason and result.status != SKIP:
            result.reason = f"waived ({reason}) but passed: the waiver can go"
