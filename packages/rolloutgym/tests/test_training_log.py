"""Training logs: the core reader (``rolloutgym.runs.read_training_log``) and their curves in ``rolloutgym report``.

Real files in a temporary folder, the real CLI (``rolloutgym.cli.main``), real matplotlib plots.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.report import build_report, build_training_report
from rolloutgym.runs import TrainingLogError, file_kind, read_training_log
from rolloutgym_protocol.errors import ConfigError

if importlib.util.find_spec("matplotlib") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("matplotlib is missing: install 'rolloutgym[report]' (the report tests need it under CI)")
    pytest.skip("matplotlib (the 'report' extra) is not installed", allow_module_level=True)

HEADER = {"rolloutgym_training_log": 1, "trainer": "grpo", "model": "hf:tiny", "env_ids": ["toy/guess-v0"]}


def write_log(path: Path, lines: list[Any], *, raw_tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + raw_tail, encoding="utf-8")
    return path


def grpo_lines(rewards: list[float]) -> list[dict[str, Any]]:
    """A GRPO-like log: pass rate on odd steps only, a constant KL, the end and the evaluation."""
    lines: list[dict[str, Any]] = [HEADER]
    for step, reward in enumerate(rewards, start=1):
        line = {"step": step, "epoch": step / len(rewards), "reward": reward, "reward_std": 0.05}
        line |= {"loss": round(1.0 - reward, 4), "kl": 0.0, "note": "text is not a metric"}
        if step % 2:
            line["rolloutgym/pass_rate"] = reward
        lines.append(line)
    lines.append({"step": len(rewards), "event": "end", "train_loss": 0.5})
    lines.append(
        {
            "event": "evaluation",
            **{"before/policy": "hf:tiny", "before/pass_rate": 0.0, "before/mean_reward": 0.125},
            **{"after/policy": "hf:trained", "after/pass_rate": 1.0, "after/mean_reward": 0.875},
        }
    )
    return lines


def figures(page: str) -> dict[str, dict[str, list[list[float]]]]:
    """metric -> {log label: [[step, value], ...]} from the page's ``data-series`` attributes."""
    found = re.findall(r'<figure data-metric="([^"]*)" data-series="([^"]*)">\s*<svg', page)
    return {html.unescape(metric): json.loads(html.unescape(series)) for metric, series in found}


# ---- the reader ---------------------------------------------------------------------------


def test_reader_gives_header_steps_events_and_metrics_with_gaps(tmp_path: Path) -> None:
    log = read_training_log(write_log(tmp_path / "training_log.jsonl", grpo_lines([0.1, 0.4, 0.7, 0.9])))
    assert log.header == {"trainer": "grpo", "model": "hf:tiny", "env_ids": ["toy/guess-v0"]}
    assert [step["step"] for step in log.steps] == [1, 2, 3, 4]
    assert [event["event"] for event in log.events] == ["end", "evaluation"]
    assert log.metrics == ["reward", "reward_std", "loss", "kl", "rolloutgym/pass_rate"]  # not step, epoch, note
    assert log.series("reward") == ([1, 2, 3, 4], [0.1, 0.4, 0.7, 0.9])
    assert log.series("rolloutgym/pass_rate") == ([1, 3], [0.1, 0.7])  # missing at steps 2 and 4
    assert log.series("train_loss") == ([], [])  # an event's numbers are not a curve


def test_a_log_without_header_nulls_blank_lines_and_a_cut_last_line_read(tmp_path: Path) -> None:
    """tinker-cookbook's metrics.jsonl shape: {"step": N, ...} per line, no header."""
    lines = [{"step": step, "env/all/reward/total": step / 4, "optim/lr": 1e-4} for step in range(3)]
    lines[1]["env/all/reward/total"] = None  # a NaN the trainer wrote as null: no value at that step
    cut = '{"step": 3, "env/all/rew'  # the trainer was killed mid-write
    path = write_log(tmp_path / "metrics.jsonl", lines[:2], raw_tail="\n" + json.dumps(lines[2]) + "\n" + cut)
    log = read_training_log(path)
    assert log.header == {} and [step["step"] for step in log.steps] == [0, 1, 2]
    assert log.series("env/all/reward/total") == ([0, 2], [0.0, 0.5])


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        ('{"step": 1, "loss": 1}\n{"step": 2, "loss": \n{"step": 3}\n', ":2:", "not valid JSON"),
        ('{"step": 1}\n[1, 2]\n', ":2:", "expected a JSON object, got list"),
        (
            '{"rolloutgym_training_log": 1}\n\n{"loss": 0.5}\n',
            ":3:",
            "no 'step'; each line is one trainer step: add \"step\"",
        ),
        ('{"step": "one", "loss": 0.5}\n', ":1:", "'step' must be a number"),
        ('{"step": 1}\n{"rolloutgym_training_log": 1}\n', ":2:", "the header must be the first line"),
        ('{"rolloutgym_training_log": 7}\n', ":", "newer than this rolloutgym reads"),
        ('{"event": 3}\n', ":1:", "'event' must be a string"),
        ("\n\n", ":", "empty training log"),
    ],
)
def test_a_malformed_log_is_an_error_naming_file_line_and_fix(
    tmp_path: Path, content: str, where: str, says: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TrainingLogError) as caught:
        read_training_log(path)
    message = str(caught.value)
    assert message.startswith(f"{path}{where}") and says in message


def test_files_are_told_apart_by_content_not_name(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.jsonl", grpo_lines([0.1, 0.2]))
    run = tmp_path / "training_log.jsonl"
    rg.run("toy/guess-v0", policy="oracle", limit=1, out=run)
    assert (file_kind(log), file_kind(run)) == ("training_log", "run")
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(ConfigError, match="neither a run file"):
        file_kind(other)


# ---- rolloutgym report on training logs ----------------------------------------------------


def test_cli_report_draws_a_training_log_one_plot_per_metric(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_log(tmp_path / "out" / "training_log.jsonl", grpo_lines([0.1, 0.4, 0.7, 0.9]))
    assert main(["report", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "1 training log(s)" in printed and "4 step(s) to step 4" in printed
    page = (tmp_path / "out" / "training_log.html").read_text(encoding="utf-8")
    plots = figures(page)
    # reward (with its reward_std band), pass rate, loss; kl is 0 at every step: a constant, not a flat plot
    assert list(plots) == ["reward", "rolloutgym/pass_rate", "loss"]
    label = "grpo · out/training_log.jsonl"
    assert plots["reward"] == {label: [[1, 0.1], [2, 0.4], [3, 0.7], [4, 0.9]]}
    assert plots["rolloutgym/pass_rate"] == {label: [[1, 0.1], [3, 0.7]]}
    assert plots["loss"][label][-1] == [4, 0.1]
    assert "mean reward of the step&#x27;s episodes" in page  # known metrics say what they measure
    assert re.search(r'<tr data-metric="kl"><td>kl</td><td data-value="0.0">', page)
    assert '<tr data-moment="after"><td>grpo · out/training_log.jsonl</td><td>after</td><td>hf:trained</td>' in page
    assert 'data-value="1.0">100.0%</td>' in page and "train_loss=0.5" in page
    assert 'id="training"' in page and "https://" not in page and "<script src" not in page


def test_cli_report_overlays_several_logs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    first = write_log(tmp_path / "a" / "training_log.jsonl", grpo_lines([0.1, 0.5, 0.9]))
    headerless = [{"step": step, "reward": 0.2 * step, "entropy": 1.0 - 0.1 * step} for step in range(1, 4)]
    second = write_log(tmp_path / "b" / "metrics.jsonl", headerless)
    out = tmp_path / "curves.html"
    assert main(["report", str(first), str(second), "-o", str(out), "--title", "two runs"]) == 0
    assert "2 training log(s)" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    plots = figures(page)
    assert plots["reward"] == {
        "grpo · a/training_log.jsonl": [[1, 0.1], [2, 0.5], [3, 0.9]],
        "b/metrics.jsonl": [[1, 0.2], [2, 0.4], [3, 0.6000000000000001]],
    }
    assert list(plots["entropy"]) == ["b/metrics.jsonl"]  # a metric of one log only still gets its plot
    assert "<title>two runs</title>" in page and page.count("<svg") == len(plots)


def test_report_mixes_run_files_and_training_logs_in_one_page(tmp_path: Path) -> None:
    run = tmp_path / "guess.jsonl"
    rg.run("toy/guess-v0", policy="oracle", limit=2, out=run)
    log = write_log(tmp_path / "training_log.jsonl", grpo_lines([0.2, 0.8]))
    result = build_report([run, log], tmp_path / "both.html")
    assert [digest.path for digest in result.runs] == [run] and [item.path for item in result.training_logs] == [log]
    page = result.path.read_text(encoding="utf-8")
    assert 'id="run-0"' in page and '<section class="view" id="training" hidden>' in page
    assert 'data-view="training" aria-selected="false"' in page and "reward" in figures(page)


def test_report_errors_name_the_line_and_train_report_refuses_run_files(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bad = tmp_path / "training_log.jsonl"
    bad.write_text('{"rolloutgym_training_log": 1}\n{"step": 1, "loss": 0.5}\n{"loss": 0.4}\n{"step": 3}\n')
    assert main(["report", str(bad)]) == 2
    error = capsys.readouterr().err
    assert f"{bad}:3: no 'step'" in error and "Traceback" not in error
    run = tmp_path / "guess.jsonl"
    rg.run("toy/guess-v0", policy="oracle", limit=1, out=run)
    with pytest.raises(ConfigError, match="is a run file, not a training log; .*'rolloutgym report"):
        build_training_report([run])


def test_metric_names_cannot_inject_markup(tmp_path: Path) -> None:
    lines = [{"step": step, '<img src=x onerror="alert(1)">': step, "a$b$": step} for step in (1, 2)]
    page = build_report([write_log(tmp_path / "log.jsonl", lines)], tmp_path / "log.html").path.read_text()
    assert "<img src=x" not in page and set(figures(page)) == {'<img src=x onerror="alert(1)">', "a$b$"}
