"""``rolloutgym check`` / ``rolloutgym.check()``: the report card on the toy envs, from Python and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rolloutgym
from rolloutgym.builtin import toy
from rolloutgym.checks import CheckReport, HackProbe, check, near_miss, probe_classes
from rolloutgym.checks._episodes import sample_indices
from rolloutgym.checks._lint import lint_folder
from rolloutgym.cli import main
from rolloutgym.registry import Registry
from rolloutgym_protocol import Score, hookimpl
from rolloutgym_protocol.errors import ConfigError


def test_the_arith_card_passes_its_conformance_checks_and_names_the_negation_weakness() -> None:
    report = rolloutgym.check("toy/arith-v0", sample=3, seed=0)
    assert [report.result(name).status for name in ("ceiling", "floor", "determinism")] == ["pass"] * 3
    assert len(report.tasks_checked) == 3 and report.tasks_total == 40
    negation = report.result("probe:negation")
    assert negation.status == "fail" and not report.ok and report.exit_code == 1
    assert len(negation.findings) == 3 and all("scored 1 > null 0" in finding for finding in negation.findings)
    # the arith grader rejects hedges, answers hidden in <think> and NaN: those probes pass
    for name in ("probe:hedge", "probe:think", "probe:numbers", "probe:keyword-stuffing", "probe:constant"):
        assert report.result(name).status == "pass", report.result(name)
    assert report.result("probe:reward-file").status == "skip"  # no file tools: nothing to write with
    assert CheckReport.from_dict(json.loads(json.dumps(report.to_dict()))).to_dict() == report.to_dict()


def test_a_waived_failure_is_known_with_its_reason_and_does_not_fail_the_card() -> None:
    report = check("toy/arith-v0", sample=2, checks=["probe"], probes=["negation"], waivers={"probe:negation": "why"})
    result = report.result("probe:negation")
    assert (result.status, result.reason, report.ok) == ("known", "why", True)


def test_an_oracle_that_misses_fails_the_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toy.ArithmeticEnv, "oracle_action", lambda self: str(self.task.answer + 1))
    result = check("toy/arith-v0", sample=2, checks=["ceiling"]).result("ceiling")
    assert result.status == "fail" and len(result.findings) == 2 and "expected" in result.findings[0]


def test_a_null_policy_that_scores_fails_the_floor_unless_the_task_is_exempt(monkeypatch: pytest.MonkeyPatch) -> None:
    graded = toy.ArithmeticEnv.evaluate
    monkeypatch.setattr(
        toy.ArithmeticEnv, "evaluate", lambda self, action: Score(1.0) if not action else graded(self, action)
    )
    report = check("toy/arith-v0", sample=2, checks=["floor"])
    assert report.result("floor").status == "fail"
    exempt = check("toy/arith-v0", sample=2, checks=["floor"], null_exempt=report.tasks_checked)
    assert exempt.result("floor").status == "pass"


def test_a_task_whose_oracle_does_nothing_is_exempt_from_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toy.ArithmeticEnv, "oracle_action", lambda self: "")  # 'the right answer is to say nothing'
    monkeypatch.setattr(toy.ArithmeticEnv, "evaluate", lambda self, action: Score(float(action == "")))
    assert check("toy/arith-v0", sample=2, checks=["floor"]).result("floor").status == "pass"


def test_an_env_whose_observation_is_not_seeded_fails_determinism(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    original = toy.ArithmeticEnv.initial_observation

    def unseeded(self, *, options=None):
        observation, info = original(self, options=options)
        return [{"role": "user", "content": observation[0]["content"] + f" (#{random.random()})"}], info

    monkeypatch.setattr(toy.ArithmeticEnv, "initial_observation", unseeded)
    result = check("toy/arith-v0", sample=1, checks=["ceiling", "determinism"]).result("determinism")
    assert result.status == "fail" and "initial_observation" in result.findings[0]


def test_signal_is_the_share_of_tasks_whose_rewards_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    flat = check("toy/arith-v0", sample=3, checks=["signal"], signal_policy="oracle", signal_k=3).result("signal")
    assert (flat.status, flat.metrics["share"]) == ("warn", 0.0)

    def coin(self, action):  # a reward drawn from the episode's seed: groups differ
        return Score(float(self.np_random.random() < 0.5))

    monkeypatch.setattr(toy.ArithmeticEnv, "evaluate", coin)
    varied = check("toy/arith-v0", sample=3, checks=["signal"], signal_policy="null", signal_k=6).result("signal")
    assert varied.status == "pass" and varied.metrics["share"] > 0 and varied.metrics["k"] == 6


def test_the_sample_is_seeded_sorted_and_all_when_it_covers_the_tasks() -> None:
    assert sample_indices(40, 5, 0) == sample_indices(40, 5, 0) == sorted(sample_indices(40, 5, 0))
    assert sample_indices(40, 5, 0) != sample_indices(40, 5, 1)
    assert sample_indices(3, 10, 0) == sample_indices(3, None, 0) == [0, 1, 2]


def test_near_miss_is_wrong_and_close() -> None:
    assert near_miss("68") == "69" and near_miss("x = 3.14") == "x = 3.15"
    assert near_miss("B") == "C" and near_miss("yes") == "no" and near_miss("Paris") != "Paris"


class CheatingProbe(HackProbe):
    """A plugin's probe that plays the right answer: a grader cannot tell, so it must be flagged."""

    name = "cheat"
    exploit = "the probe knows the answer"
    uses_oracle = True
    needs_oracle = True

    def play(self, view):
        while True:
            yield view.oracle


class _ProbePlugin:
    @staticmethod
    @hookimpl
    def rolloutgym_hack_probes():
        return [CheatingProbe, "rolloutgym.checks._answer_probes:HedgeProbe"]


class _BrokenProbePlugin:
    @staticmethod
    @hookimpl
    def rolloutgym_hack_probes():
        return [dict]


def test_a_plugin_adds_probes_through_the_hook_and_they_run_on_the_card() -> None:
    registry = Registry()
    registry.register(_ProbePlugin(), name="probe-plugin")
    assert [probe.name for probe in probe_classes(registry)].count("cheat") == 1
    result = check("toy/arith-v0", sample=2, checks=["probe"], probes=["cheat"], registry=registry).result(
        "probe:cheat"
    )
    assert result.status == "fail" and len(result.findings) == 2
    broken = Registry()
    broken.register(_BrokenProbePlugin(), name="broken-probes")
    with pytest.raises(ConfigError, match="broken-probes.*not a named rolloutgym.checks.HackProbe"):
        probe_classes(broken)


def test_unknown_checks_and_probes_are_one_line_errors() -> None:
    with pytest.raises(ConfigError, match="no check 'bogus'; the checks are: ceiling"):
        check("toy/arith-v0", checks=["bogus"])
    with pytest.raises(ConfigError, match="no hack probe 'bogus'; the probes are: .*negation"):
        check("toy/arith-v0", checks=["probe"], probes=["bogus"])


def test_the_command_prints_the_card_and_exits_1_on_a_failure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "toy/arith-v0", "--sample", "2"]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("FAIL toy/arith-v0") and "probe:negation" in printed and "arith-" in printed


def test_the_command_writes_json_and_exits_0_with_the_failure_waived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "card.json"
    code = main(
        ["check", "toy/arith-v0", "-s", "2", "--json", "--out", str(out), "--waive", "probe:negation=last integer"]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text()) and printed["ok"] is True
    assert {result["name"]: result["status"] for result in printed["results"]}["probe:negation"] == "known"


def test_the_command_rejects_bad_options_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "toy/arith-v0", "--only", "ceiling,bogus"]) == 2
    assert "no check 'bogus'" in capsys.readouterr().err
    assert main(["check", "toy/arith-v0", "--waive", "probe:negation"]) == 2
    assert "--waive expects CHECK=REASON" in capsys.readouterr().err


def _task(root: Path, name: str, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def test_the_folder_lint_names_root_agents_unpinned_images_copied_solutions_and_missing_parts(tmp_path: Path) -> None:
    good = {
        "instruction.md": "Fix it.\n",
        "task.toml": "[verifier]\ntimeout_sec = 30\n",
        "environment/Dockerfile": "FROM python:3.12-slim@sha256:" + "a" * 64 + "\nUSER agent\n",
        "tests/test.sh": "exit 0\n",
        "solution/solve.sh": "true\n",
    }
    _task(tmp_path, "good", good)
    assert lint_folder(tmp_path).status == "pass"
    _task(
        tmp_path,
        "bad",
        {
            **good,
            "environment/Dockerfile": "FROM ubuntu\nCOPY solution/ /app/solution/\n",
            "task.toml": "[verifier]\nnetwork = true\n",
            "tests/test.sh": "exit 1\n",
        },
    )
    (tmp_path / "bad" / "solution" / "solve.sh").unlink()
    result = lint_folder(tmp_path)
    text = "\n".join(result.findings)
    assert result.status == "fail"
    for expected in ("no solution/solve.sh", "copies tests or the solution", "verifier has network", "not pinned"):
        assert expected in text, text
    assert "runs as root" in text


def _lint(items: list) -> object:
    from rolloutgym.checks._lint import lint_tasks
    from rolloutgym.sources import ResolvedEnv

    return lint_tasks(ResolvedEnv("lint/x-v0", 0, items, build=lambda item: None))


def test_the_task_lint_finds_empty_duplicated_and_leaking_tasks_and_spares_generated_ones() -> None:
    leaky = {"id": "a", "split": "train", "question": "Say 'the quick brown fox' (answer: the quick brown fox)"}
    result = _lint(
        [
            {**leaky, "answer": "the quick brown fox"},
            {"id": "b", "split": "train", "question": "What is 2 + 2?", "answer": "4"},
            {"id": "c", "split": "test", "question": "What is 2 + 2?", "answer": "4"},
            {"id": "d", "split": "test"},
        ]
    )
    text = "\n".join(result.findings)
    assert result.status == "fail"
    assert "a: its answer 'the quick brown fox' is written in its question" in text
    assert "c (test): the same task data as b (train): a split leaks" in text and "d: the task is empty" in text
    generated = [{"id": f"{split}-0", "split": split, "index": 0} for split in ("train", "test")]
    referenced = [{"id": f"x/{n}", "split": split, "task_id": str(n)} for n, split in ((5, "train"), (16, "test"))]
    assert _lint(generated).status == _lint(referenced).status == "pass"
