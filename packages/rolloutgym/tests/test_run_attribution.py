"""Scored-failure attribution in run files (issue 48): validated, read alike by every reader, shown.

The run is a real ``toy/guess-v0`` run whose score lines get ``metadata.attribution`` added
(what an env family that can tell writes, see ``rolloutgym_protocol.attribution``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import app
from rolloutgym.runs import line_facts, read_run, summarize, summarize_run
from rolloutgym.runs._partial import partial_facts
from rolloutgym_protocol import Attribution, Score, attribute, attribution_of
from rolloutgym_protocol.errors import RunFileError
from typer.testing import CliRunner


def _attributed_run(path: Path) -> None:
    """A 6-task run of 4 rollouts; task 0's failures are the user's, task 1's first failure the env's."""
    rg.run("toy/guess-v0", policy="random", num_rollouts=4, limit=6, seed=3, out=str(path))
    lines = path.read_text().splitlines()
    for number, party in ((1, "user"), (2, "env")):
        group = json.loads(lines[number])
        for score in group["scores"]:
            if score["value"] < 1.0:
                score["metadata"]["attribution"] = {"party": party, "reason": "because", "evidence": "the trajectory"}
                if party == "env":
                    break
        lines[number] = json.dumps(group)
    path.write_text("\n".join(lines) + "\n")


def test_attribute_writes_a_checked_record_and_reads_it_back() -> None:
    score = attribute(Score(0.0, feedback="wrong"), "grader", "judge_unparseable", "no number")
    assert attribution_of(Score.from_dict(json.loads(json.dumps(score.to_dict())))) == Attribution(
        "grader", "judge_unparseable", "no number"
    )
    assert attribution_of(Score(0.0)) is None
    with pytest.raises(ValueError, match="one of agent, user, env, grader"):
        attribute(Score(0.0), "moon", "x")


def test_every_reader_counts_failures_by_party_alike(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _attributed_run(path)
    run = read_run(path)
    in_memory = summarize(run.groups, header=run.header, task_indices=run.task_indices)
    streamed = summarize_run(path).summary
    table = in_memory.failures_by_party
    failed = in_memory.num_trajectories - round(in_memory.pass_rate * in_memory.num_trajectories)
    assert table["user"] >= 1 and table["env"] == 1 and table["grader"] == 0
    assert sum(table.values()) == failed and table == streamed.failures_by_party
    assert in_memory.attributed == streamed.attributed == table["user"] + 1
    for line in path.read_bytes().splitlines()[1:]:
        assert partial_facts(line).facts == line_facts(json.loads(line))  # type: ignore[union-attr]
    agent_failed = table["agent"]
    assert in_memory.agent_pass_rate == pytest.approx(
        (in_memory.num_trajectories - failed) / (in_memory.num_trajectories - failed + agent_failed)
    )


def test_show_compare_and_report_print_the_parties(tmp_path: Path) -> None:
    path, plain = tmp_path / "run.jsonl", tmp_path / "plain.jsonl"
    _attributed_run(path)
    rg.run("toy/guess-v0", policy="random", num_rollouts=4, limit=6, seed=3, out=str(plain))
    runner = CliRunner()
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 0 and "failures by party: agent" in shown.output and "env 1" in shown.output
    assert "failures by party" not in runner.invoke(app, ["show", str(plain)]).output
    compared = runner.invoke(app, ["compare", str(plain), str(path)])
    assert (
        compared.exit_code == 0 and "B: failures by party" in compared.output and "A: failures" not in compared.output
    )
    html = tmp_path / "report.html"
    assert runner.invoke(app, ["report", str(path), "-o", str(html)]).exit_code == 0
    assert 'data-field="failures_by_party"' in html.read_text() and 'data-party="env"' in html.read_text()


def test_a_malformed_attribution_is_a_named_corruption(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _attributed_run(path)
    text = path.read_text().replace('"party": "env"', '"party": "weather"')
    path.write_text(text)
    assert partial_facts(path.read_bytes().splitlines()[2]) is None
    with pytest.raises(RunFileError, match=r"run.jsonl:3.*scores\[\d\]\.metadata.*one of agent, user, env, grader"):
        summarize_run(path)


def test_a_judge_that_cannot_decide_puts_the_failure_on_the_grader() -> None:
    from rolloutgym.declarative import Task
    from rolloutgym.verifiers import VerifierContext, build_verifier

    def judge(reply: str):  # a judge policy answering every prompt with ``reply``
        return lambda observation: {"role": "assistant", "content": reply}

    verifier = build_verifier(
        {
            "primitives": [
                {"name": "tone", "type": "llm_judge", "rubric": "Polite."},
                {"name": "answer", "type": "final_answer"},
            ]
        }
    )
    task = Task(instruction="Say hi.", hidden_ground_truth={"answer": "hi"})

    def graded(reply: str, answer: str) -> Score:
        return verifier.score(VerifierContext(final_state={}, final_output=answer, task=task, judge=judge(reply)))

    undecided = graded("I cannot tell.", "hi")
    assert undecided.value < 1.0 and attribution_of(undecided).party == "grader"  # type: ignore[union-attr]
    assert attribution_of(undecided.components["tone"]).reason == "judge_unparseable"  # type: ignore[union-attr]
    assert attribution_of(graded('{"score": 0.1}', "hi")) is None  # a judge's real 0.1 is the agent's
    assert attribution_of(graded('{"score": 1}', "hi")) is None
