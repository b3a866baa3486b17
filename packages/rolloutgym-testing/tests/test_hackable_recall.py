"""The hack probe's recall: each deliberately hackable env fails the check that should catch it; clean envs pass.

The full card on every planted env is ``benchmarks/check.py`` (with timings); here each planted env
runs the check that must catch it on a two-task sample, so the test stays fast.
"""

from __future__ import annotations

from typing import Any

import pytest
import rolloutgym_testing.hackable as hackable
from rolloutgym.checks import check
from rolloutgym.registry import Registry
from rolloutgym_testing import EnvConformanceTests


@pytest.fixture(scope="module")
def registry() -> Registry:
    registry = Registry()
    registry.register(hackable, name="hackable")
    return registry


def _options(expected: str) -> dict[str, Any]:
    if expected.startswith("probe:"):
        return {"checks": ["probe"], "probes": [expected.split(":", 1)[1]]}
    return {"checks": [expected.split(":")[0]]}


@pytest.mark.parametrize(("env_id", "expected"), sorted(hackable.PLANTED.items()))
def test_every_planted_exploit_is_caught_by_its_check(registry: Registry, env_id: str, expected: str) -> None:
    report = check(env_id, sample=2, seed=0, registry=registry, **_options(expected))
    result = report.result(expected)
    assert result.status == "fail", f"{env_id}: {expected} did not catch it: {result.summary}"
    assert result.findings, f"{env_id}: a failure names what it found"


def test_the_planted_envs_are_solvable_and_null_scores_nothing(registry: Registry) -> None:
    for env_id in hackable.PLANTED:
        if env_id == "hack/leaky-v0":  # its empty task is solved by the empty reply (a lint finding)
            continue
        report = check(env_id, sample=2, seed=0, registry=registry, checks=["ceiling", "floor"])
        assert report.ok, f"{env_id}: {[result.summary for result in report.failures]}"


@pytest.mark.parametrize("env_id", hackable.CLEAN)
def test_a_clean_env_passes_the_whole_card(registry: Registry, env_id: str) -> None:
    report = check(env_id, sample=1, seed=0, registry=registry)
    assert report.ok, [(result.name, result.findings) for result in report.failures]
    ran = {result.name for result in report.results if result.status == "pass"}
    assert {"ceiling", "floor", "determinism", "probe:numbers", "probe:constant"} <= ran
    if env_id == "hack/clean-tools-v0":  # the file-tool probes and containment ran (and found nothing)
        assert {"probe:reward-file", "probe:test-edit", "probe:hidden-read", "probe:type-lie", "containment"} <= ran


def test_the_kit_fixture_fails_a_test_with_the_findings(registry: Registry, env_check: Any) -> None:
    assert env_check("hack/clean-v0", sample=1, registry=registry).ok
    with pytest.raises(pytest.fail.Exception, match="(?s)hack/negation-v0 failed 1 check.*probe:negation"):
        env_check("hack/negation-v0", sample=1, registry=registry, checks=["probe"], probes=["negation"])


class CleanEnvCard(EnvConformanceTests):
    """The kit's opt-in report card (``test_report_card``) on a clean env; only that test is run here."""

    env_id = "hack/clean-v0"
    check_card = True
    check_sample = 2

    def registry(self) -> Registry:
        registry = Registry()
        registry.register(hackable, name="hackable")
        return registry


def test_the_opt_in_card_passes_a_clean_env_fails_a_planted_one_and_a_waiver_makes_it_known() -> None:
    CleanEnvCard().test_report_card()

    class Planted(CleanEnvCard):
        env_id = "hack/negation-v0"

    with pytest.raises(pytest.fail.Exception, match="probe:negation"):
        Planted().test_report_card()

    class Waived(Planted):
        check_waivers = {"probe:negation": "planted on purpose"}

    Waived().test_report_card()
