"""``show`` and ``report`` stream a run file into its summary: the same numbers as in memory, bounded memory."""

from __future__ import annotations

import copy
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.report._collect import _error_rows, _member_rows, collect_run
from rolloutgym.runs import iter_group_facts, read_run, summarize, summarize_run
from rolloutgym_protocol.errors import RunFileError


def _in_memory(path: Path) -> dict[str, Any]:
    run = read_run(path)
    return summarize(run.groups, header=run.header, task_indices=run.task_indices).to_dict()


def _varied_run(path: Path) -> None:
    """A real run (a few hundred trajectories), then lines that take the full reader or count tokens and errors."""
    rg.run("toy/guess-v0", policy="random", num_rollouts=8, out=str(path))
    lines = path.read_text().splitlines()
    group = json.loads(lines[1])
    extra = []
    tokens = copy.deepcopy(group)  # token ids, billed usage, an unanswered trajectory, a failed member
    for number, trajectory in enumerate(tokens["trajectories"]):
        for step in trajectory["steps"]:
            if number % 2:
                step["policy_tokens"], step["observation_tokens"] = [5] * (number + 3), [7] * 11
            else:
                step["policy_info"] = {"usage": {"completion_tokens": 9, "prompt_tokens": 40 + number}}
    tokens["trajectories"][3]["stop_reason"] = "prompt_too_long"
    tokens["errors"] = [{"error_type": "TimeoutError", "error_message": "x" * 400, "where": "policy", "member": 8}]
    tokens["scores"][0]["value"] = 1  # an integer score
    extra.append(tokens)
    filled = copy.deepcopy(group)  # no scores: the full reader fills them in from the trajectories
    filled["scores"] = []
    filled["trajectories"][0]["steps"][0]["reward"] = {"$float": "-inf"}  # a tagged value, also for it
    extra.append(filled)
    for offset, data in enumerate(extra):
        data["task_index"] = len(lines) - 1
        data["item_id"] = f"extra-{offset}"
        lines.append(json.dumps(data))
    path.write_text("\n".join(lines) + "\n")


def test_the_streamed_summary_equals_the_in_memory_one(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _varied_run(path)
    full = [line.group is not None for line in iter_group_facts(path)]
    tasks = len(full)
    assert full.count(True) == 1 and tasks > 20  # only the line without scores takes the full reader
    expected = _in_memory(path)
    assert expected["num_trajectories"] == tasks * 8 - 1 and expected["num_prompt_too_long"] == 1
    assert expected["generated_tokens"] > 0 and expected["errors_by_type"] == {"TimeoutError": 1}
    streamed = summarize_run(path)
    assert json.dumps(streamed.summary.to_dict()) == json.dumps(expected)
    assert streamed.complete and streamed.task_indices == set(range(tasks))
    digest = collect_run(path, io.StringIO())
    assert json.dumps(digest.summary.to_dict()) == json.dumps(expected)
    assert [task["trajectories"] for task in digest.tasks] == [task["trajectories"] for task in expected["tasks"]]
    groups = read_run(path).groups  # the report's rows read from the JSON equal those of the built groups
    assert [task["members"] for task in digest.tasks] == [_member_rows(group, 1.0) for group in groups]
    assert [task["failed"] for task in digest.tasks] == [_error_rows(group) for group in groups]
    assert digest.rewards == [score.value for group in groups for score in group.scores]


def test_a_bad_field_is_reported_as_by_the_full_reader(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rg.run("toy/guess-v0", policy="random", num_rollouts=2, limit=2, out=str(path))
    lines = path.read_text().splitlines()
    data = json.loads(lines[2])
    data["trajectories"][0]["steps"][0]["terminated"] = "maybe"
    lines[2] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n")
    for reader in (summarize_run, read_run):
        with pytest.raises(
            RunFileError, match=r"run.jsonl:3: invalid group line, field 'trajectories\[0\]\.steps\[0\]\.terminated'"
        ):
            reader(path)


def _small_run(path: Path, tasks: int, rollouts: int) -> None:
    step = {
        "observation": "o",
        "action": "a",
        "reward": 0.0,
        "next_observation": "n",
        "terminated": False,
        "truncated": False,
        "info": {},
        "policy_info": {},
        "policy_tokens": list(range(20)),
        "observation_tokens": list(range(10)),
    }
    header = {
        "kind": "header",
        "format_version": 1,
        "run_id": "small",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": "toy/guess-v0", "version": 0},
        "policy": "random",
        "num_rollouts": rollouts,
        "tasks": [f"t{index}" for index in range(tasks)],
        "task_indices": list(range(tasks)),
    }
    with path.open("w") as handle:
        handle.write(json.dumps(header) + "\n")
        for index in range(tasks):
            trajectory = {
                "initial_observation": "start",
                "steps": [step, dict(step, terminated=True, reward=float(index % 2))],
                "terminated": True,
                "truncated": False,
                "metadata": {"elapsed_seconds": 0.01},
            }
            group = {
                "kind": "group",
                "task_index": index,
                "item_id": f"t{index}",
                "trajectories": [trajectory] * rollouts,
                "scores": [{"value": float(index % 2)}] * rollouts,
            }
            handle.write(json.dumps(group, separators=(",", ":")) + "\n")


def test_memory_does_not_grow_with_the_run_file(tmp_path: Path) -> None:
    """20,000 small trajectories (about 13 MB of JSON, several times that as objects): the streamed
    summary's peak is a small fraction of the file, since one line is held at a time."""
    path = tmp_path / "run.jsonl"
    _small_run(path, tasks=2500, rollouts=8)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        summary = summarize_run(path).summary
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert summary.num_trajectories == 20_000 and summary.pass_rate == 0.5
    # what remains: one TaskSummary per task (most of the ~1.3 MB), a reward per trajectory
    assert peak < size / 5, (peak, size)


def _step_variant(group: dict[str, Any], change: Any) -> bytes:
    data = copy.deepcopy(group)
    change(data["trajectories"][0]["steps"][0])
    return json.dumps(data).encode()


def test_the_partial_decode_reads_what_line_facts_reads_or_steps_aside(tmp_path: Path) -> None:
    """``partial_facts`` (show's typed decode, token lists skipped unparsed) gives line_facts' numbers on
    every line it accepts, and hands back (None) every line whose kinds or numbers it is not sure of."""
    from rolloutgym.runs import line_facts
    from rolloutgym.runs._partial import partial_facts

    path = tmp_path / "run.jsonl"
    _varied_run(path)
    lines = path.read_bytes().splitlines()[1:]
    decoded = [partial_facts(line) for line in lines]
    assert decoded.count(None) == 1  # the line with a tagged reward (no scores)
    for line, partial in zip(lines, decoded, strict=True):
        if partial is not None:
            assert (
                partial.facts == line_facts(json.loads(line)) and partial.task_index == json.loads(line)["task_index"]
            )
    tokens = json.loads(lines[-2])  # token ids, billed usage, an error
    assert decoded[-2] is not None and decoded[-2].facts.generated_tokens > 0
    assert decoded[-2].errors == tokens["errors"]
    spaced = _step_variant(tokens, lambda step: step.update(policy_tokens=[], observation_tokens=[1, 2, 3]))
    assert partial_facts(spaced.replace(b'"policy_tokens": []', b'"policy_tokens": [ ]')).facts == line_facts(
        json.loads(spaced)
    )
    unsure = [
        lambda step: step.update(policy_tokens=["a,b", "c"]),  # not numbers: the commas do not count them
        lambda step: step.update(policy_tokens=[[1, 2]]),
        lambda step: step.update(policy_logprobs={"x": 1}),
        lambda step: step.update(info=[]),
        lambda step: step.update(policy_info=None),
        lambda step: step.update(reward=True),
        lambda step: step.update(reward=10**400),
        lambda step: step.update(terminated="maybe"),
        lambda step: step.pop("action"),
    ]
    for change in unsure:
        assert partial_facts(_step_variant(tokens, change)) is None
    assert partial_facts(json.dumps(dict(tokens, kind="header")).encode()) is None
    assert partial_facts(json.dumps(dict(tokens, metadata=[])).encode()) is None
    assert partial_facts(b"[1, 2]") is None and partial_facts(b'{"kind": "group", NaN}') is None


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rg.run("toy/guess-v0", policy="random", num_rollouts=2, limit=2, out=str(path))
    lines = path.read_bytes().splitlines()
    lines[2] = lines[2].replace(b'"item_id": "', b'"item_id": "\xff', 1).replace(b'"item_id":"', b'"item_id":"\xff', 1)
    assert b"\xff" in lines[2]
    path.write_bytes(b"\n".join(lines) + b"\n")
    for reader in (summarize_run, read_run):
        with pytest.raises(RunFileError, match=r"run.jsonl:3: not valid UTF-8 \(byte \d+ of the line\)"):
            reader(path)
