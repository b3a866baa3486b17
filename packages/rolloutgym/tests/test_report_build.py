"""The HTML report without a browser: its numbers, its embedded trajectories, the CLI and the server.

The browser half (opening the page, clicking through it) is tests/e2e/test_report_browser.py.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rolloutgym.report import ReportServer, build_report, default_report_path
from rolloutgym.runs import iter_run, read_run, summarize

if importlib.util.find_spec("matplotlib") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("matplotlib is missing: install 'rolloutgym[report]' (the report tests need it under CI)")
    pytest.skip("matplotlib (the 'report' extra) is not installed", allow_module_level=True)


def load_support() -> ModuleType:
    path = Path(__file__).with_name("test_report_support.py")
    spec = importlib.util.spec_from_file_location("rolloutgym_report_test_support", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


support = load_support()


def _json_clean(value: Any) -> Any:
    """What a summary looks like after the JSON round trip (NaN -> None, int keys -> str)."""
    return json.loads(json.dumps(value, default=repr).replace("NaN", "null"))


def _expected_summary(path: Path) -> dict[str, Any]:
    run = read_run(path, allow_partial_tail=True)
    data = summarize(run.groups, header=run.header, task_indices=run.task_indices).to_dict()
    return _json_clean(data)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("runs")
    return {
        "guess-oracle": support.toy_run(folder / "guess-oracle.jsonl", "toy/guess-v0", "oracle"),
        "guess-random": support.toy_run(folder / "guess-random.jsonl", "toy/guess-v0", "random"),
        "arith-oracle": support.toy_run(folder / "arith-oracle.jsonl", "toy/arith-v0", "oracle", n=2, limit=5),
        "arith-null": support.toy_run(folder / "arith-null.jsonl", "toy/arith-v0", "null", n=2, limit=5),
        "errors": support.error_run(folder / "errors.jsonl"),
        "tokens": support.token_run(folder / "tokens.jsonl"),
    }


@pytest.mark.parametrize("name", ["guess-oracle", "guess-random", "arith-oracle", "errors", "tokens"])
def test_report_numbers_are_the_numbers_of_show(runs: dict[str, Path], tmp_path: Path, name: str) -> None:
    result = build_report([runs[name]], tmp_path / "report.html")
    html = result.path.read_text(encoding="utf-8")
    data = support.report_data(html)
    expected = _expected_summary(runs[name])
    embedded = data["runs"][0]["summary"]
    assert embedded == {key: value for key, value in expected.items() if key != "tasks"}
    for task, expected_task in zip(data["runs"][0]["tasks"], expected["tasks"], strict=True):
        assert {key: task[key] for key in expected_task} == expected_task
    # The static summary cards carry the same values.
    for field in ("pass_rate", "mean_reward", "num_tasks", "num_trajectories", "num_errors", "total_tokens"):
        card = re.search(rf'data-field="{field}" data-value="([^"]*)"', html)
        assert card and json.loads(card.group(1).replace("&quot;", '"')) == expected[field]


def test_errors_and_tokens_are_counted(runs: dict[str, Path], tmp_path: Path) -> None:
    errors = build_report([runs["errors"]], tmp_path / "errors.html").runs[0]
    assert errors.summary.num_errors == 6 and errors.summary.errors_by_type == {"ConnectionError": 6}
    assert len(errors.errors) == 6 and all("model server went away" in error["message"] for error in errors.errors)
    assert errors.summary.num_trajectories == 6 and errors.summary.pass_rate == 0.0
    tokens = build_report([runs["tokens"]], tmp_path / "tokens.html").runs[0]
    assert tokens.summary.generated_tokens > 0 and tokens.summary.total_tokens > tokens.summary.generated_tokens
    assert tokens.summary.pass_rate == 1.0


def test_the_streamed_digest_summarises_exactly_like_the_groups(runs: dict[str, Path], tmp_path: Path) -> None:
    for name, path in runs.items():
        run = read_run(path)
        full = summarize(run.groups, header=run.header, task_indices=run.task_indices)
        digest = build_report([path], tmp_path / f"{name}.html").runs[0]
        assert digest.summary == full


def test_every_trajectory_is_embedded_and_expands_to_the_run_file(runs: dict[str, Path], tmp_path: Path) -> None:
    result = build_report([runs["tokens"], runs["errors"]], tmp_path / "both.html")
    blobs = support.blob_groups(result.path.read_text(encoding="utf-8"))
    assert len(blobs) == len(result.runs[0].blob_ids) + len(result.runs[1].blob_ids)
    for run_number, path in enumerate([runs["tokens"], runs["errors"]]):
        for position, (_, group) in enumerate(iter_run(path)):
            expected = _json_clean(group.to_dict())
            for trajectory in expected["trajectories"]:
                for step in trajectory["steps"]:
                    del step["observation"]  # the viewer rebuilds it from the previous step
                    step.pop("observation_tokens", None)  # not shown; counted in the summary
                    step["policy_info"].pop("tools", None)
                    if "policy_logprobs" in step:
                        step["policy_logprobs"] = [round(value, 4) for value in step["policy_logprobs"]]
            assert blobs[f"rg-blob-{run_number}-{position}"] == expected
    first_step = next(iter(blobs.values()))["trajectories"][0]["steps"][0]
    assert first_step["policy_tokens"] and len(first_step["policy_logprobs"]) == len(first_step["policy_tokens"])
    assert result.runs[0].blob_bytes < result.runs[0].raw_bytes  # compressed


def test_the_page_is_self_contained(runs: dict[str, Path], tmp_path: Path) -> None:
    html = build_report([runs["guess-oracle"], runs["guess-random"]], tmp_path / "page.html").path.read_text(
        encoding="utf-8"
    )
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html), (
        "the report loads something from the network"
    )
    assert all(href.startswith("data:") for href in re.findall(r'<link[^>]*href="([^"]*)"', html))
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?https?:", html)
    assert html.count("<svg") >= 4  # three plots per run... and the delta chart
    assert 'id="compare"' in html and "Pass-rate change per task" in html


def test_run_content_cannot_inject_markup(tmp_path: Path) -> None:
    hostile = "</script><img src=x onerror=alert(1)><!--"
    run_file = tmp_path / "hostile.jsonl"
    header = support.hand_header("toy/arith-v0", hostile, [hostile], 1)
    group = {
        "kind": "group",
        "task_index": 0,
        "item_id": hostile,
        "item": hostile,
        "trajectories": [
            {
                "initial_observation": [{"role": "user", "content": hostile}],
                "steps": [
                    {
                        "observation": [],
                        "action": hostile,
                        "reward": 0.0,
                        "next_observation": [],
                        "terminated": True,
                        "truncated": False,
                        "info": {"score": {"value": 0.0, "feedback": hostile}},
                    }
                ],
                "terminated": True,
                "truncated": False,
            }
        ],
        "scores": [{"value": 0.0, "feedback": hostile}],
        "errors": [{"error_type": hostile, "error_message": hostile, "where": "policy", "member": 1}],
    }
    run_file.write_text(json.dumps(header) + "\n" + json.dumps(group) + "\n")
    html = build_report([run_file], tmp_path / "hostile.html").path.read_text(encoding="utf-8")
    assert "<img src=x" not in html and "</script><img" not in html
    assert support.report_data(html)["runs"][0]["tasks"][0]["task_id"] == hostile


def test_two_runs_compare_per_task_like_rolloutgym_compare(runs: dict[str, Path], tmp_path: Path) -> None:
    result = build_report([runs["arith-null"], runs["arith-oracle"]], tmp_path / "compare.html")
    data = support.report_data(result.path.read_text(encoding="utf-8"))
    (comparison,) = data["comparisons"]
    assert [row["task_id"] for row in comparison["rows"]] == sorted(
        task.task_id for task in result.runs[0].summary.tasks
    )
    assert all(row["pass_a"] == 0.0 and row["pass_b"] == 1.0 and row["delta_pass"] == 1.0 for row in comparison["rows"])
    assert all(math.isclose(row["delta_reward"], 1.0) for row in comparison["rows"])


def test_runs_of_different_envs_are_shown_but_not_compared(runs: dict[str, Path], tmp_path: Path) -> None:
    html = build_report([runs["guess-oracle"], runs["arith-oracle"]], tmp_path / "mixed.html").path.read_text(
        encoding="utf-8"
    )
    assert "Not compared" in html and support.report_data(html)["comparisons"] == []
    assert 'id="run-1"' in html


def test_an_unfinished_run_is_reported_as_such(runs: dict[str, Path], tmp_path: Path) -> None:
    lines = runs["arith-oracle"].read_text().splitlines(keepends=True)
    cut = tmp_path / "killed.jsonl"
    cut.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # two groups, then a line cut by a kill
    result = build_report([cut], tmp_path / "killed.html")
    assert result.runs[0].summary.num_tasks == 2 and result.runs[0].num_missing == 3
    assert "Incomplete run: 3 task(s)" in result.path.read_text(encoding="utf-8")


def test_default_report_path_sits_next_to_the_run() -> None:
    assert default_report_path([Path("runs/shop.jsonl")]) == Path("runs/shop.html")
    assert default_report_path([Path("runs/a.jsonl"), Path("b.jsonl")]) == Path("runs/a-vs-b.html")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_cli_report_writes_next_to_the_run_and_explains_mistakes(runs: dict[str, Path], tmp_path: Path) -> None:
    run_file = tmp_path / "guess.jsonl"
    run_file.write_bytes(runs["guess-oracle"].read_bytes())
    done = cli("report", str(run_file))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "guess.html").exists() and "pass rate 100.0%" in done.stdout and "file://" in done.stdout
    missing = cli("report", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    not_a_run = tmp_path / "notes.jsonl"
    not_a_run.write_text('{"hello": 1}\n')
    refused = cli("report", str(not_a_run), "-o", str(tmp_path / "x.html"))
    assert refused.returncode == 2 and "header" in refused.stderr and "Traceback" not in refused.stderr
    overwrite = cli("report", str(run_file), "-o", str(run_file))
    assert overwrite.returncode == 2 and "refusing to overwrite" in overwrite.stderr


def test_server_serves_the_report_and_nothing_else(runs: dict[str, Path], tmp_path: Path) -> None:
    page = build_report([runs["arith-oracle"]], tmp_path / "served.html").path
    server = ReportServer(page)
    server.start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url, timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/html")
            assert response.read() == page.read_bytes()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url + "../../etc/passwd", timeout=10)
        assert refused.value.code == 404
        refused.value.close()
    finally:
        server.stop()
        server.stop()


@pytest.mark.parametrize("options", [["--no-open"], []], ids=["no-open", "headless"])
def test_cli_view_serves_on_loopback_until_interrupted(runs: dict[str, Path], options: list[str]) -> None:
    # Without a display (as here), 'view' must not start a text browser in the terminal: it says how to connect.
    environment = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    process = subprocess.Popen(
        [sys.executable, "-m", "rolloutgym", "view", str(runs["arith-oracle"]), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(environment, COLUMNS="200"),
    )
    try:
        url = None
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(r"serving the report at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        assert url, process.stderr.read() if process.stderr else "no URL printed"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert b"rolloutgym report" in response.read()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0 and "stopped" in out and "Traceback" not in err
        assert ("no display here" in err and "ssh -L" in err) == (options == [])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
