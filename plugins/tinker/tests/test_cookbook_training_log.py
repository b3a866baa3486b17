"""tinker-cookbook's own metrics log (``LOG_PATH/metrics.jsonl``) is a rolloutgym training log.

The file is written by the cookbook's ``JsonLogger`` (what its RL loop logs through), with
metric names of the shape its RL loop uses; ``rolloutgym report`` then draws it. No Tinker
service is involved: the logger writes a local file.
"""

from __future__ import annotations

import html
import json
import re

import pytest

pytest.importorskip(
    "tinker_cookbook", reason="tinker-cookbook is not installed (pip install 'rolloutgym-tinker[cookbook]')"
)
pytest.importorskip("matplotlib", reason="the report draws with matplotlib (pip install 'rolloutgym[report]')")

from rolloutgym.cli import main  # noqa: E402
from rolloutgym.runs import read_training_log  # noqa: E402
from tinker_cookbook.utils.ml_log import JsonLogger  # noqa: E402


def test_the_cookbook_metrics_log_reads_and_renders_as_training_curves(tmp_path, capsys) -> None:
    logger = JsonLogger(tmp_path / "guess-rl")
    for step in range(4):
        logger.log_metrics(
            {
                "env/all/reward/total": 0.25 * step,
                "env/all/rolloutgym/pass": 0.5 * (step >= 2),
                "optim/lr": 4e-5,
                "progress/done_frac": (step + 1) / 4,
                "model_name": "Qwen/Qwen3-8B",  # text: kept, not drawn
            },
            step=step,
        )
    path = tmp_path / "guess-rl" / "metrics.jsonl"
    log = read_training_log(path)
    assert log.header == {} and log.series("env/all/reward/total") == ([0, 1, 2, 3], [0.0, 0.25, 0.5, 0.75])
    assert main(["report", str(path)]) == 0
    assert "4 step(s) to step 3" in capsys.readouterr().out
    page = (tmp_path / "guess-rl" / "metrics.html").read_text(encoding="utf-8")
    drawn = {
        html.unescape(metric): json.loads(html.unescape(series))
        for metric, series in re.findall(r'<figure data-metric="([^"]*)" data-series="([^"]*)">', page)
    }
    assert set(drawn) == {"env/all/reward/total", "env/all/rolloutgym/pass", "progress/done_frac"}
    assert drawn["env/all/reward/total"] == {"guess-rl/metrics.jsonl": [[0, 0.0], [1, 0.25], [2, 0.5], [3, 0.75]]}
    assert '<tr data-metric="optim/lr">' in page  # the same at every step: listed, not drawn
