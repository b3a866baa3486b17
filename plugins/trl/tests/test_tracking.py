"""``report_to``: a real GRPO run (hf:tiny on trl/digits-v0, 2 steps) sends the trainer's and the env's
metrics to every tracker installed (TensorBoard: the trl plugin's ``test`` extra installs it, so CI
runs this; MLflow and W&B where installed: ``rolloutgym-trl[tracking]``, ``[wandb]``); each
tracker's own reader gets them back: TensorBoard's event files, MLflow's local file store, W&B's
offline run folder. Nothing leaves the machine."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import train_grpo
from rolloutgym_trl.tracking import report_to_options

INSTALLED = [name for name in ("tensorboard", "mlflow", "wandb") if importlib.util.find_spec(name) is not None]

ENV_METRICS = ("rolloutgym/pass_rate", "rolloutgym/groups_with_spread", "rolloutgym/masked_attributed")


def _scalars(folder: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    found: dict[str, list[float]] = {}
    for events in folder.rglob("events.out.tfevents.*"):
        accumulator = EventAccumulator(str(events.parent))
        accumulator.Reload()
        for tag in accumulator.Tags()["scalars"]:
            found[tag] = [event.value for event in accumulator.Scalars(tag)]
    return found


@pytest.mark.skipif(not INSTALLED, reason="no tracker library installed (pip install 'rolloutgym-trl[tracking]')")
def test_a_grpo_run_reaches_every_installed_tracker(tmp_path: Path, monkeypatch) -> None:
    trackers = list(INSTALLED)
    if "wandb" in trackers:
        monkeypatch.setenv("WANDB_MODE", "offline")
        monkeypatch.setenv("WANDB_DIR", str(tmp_path))
        monkeypatch.setenv("WANDB_SILENT", "true")
    store = tmp_path / "mlruns"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store.as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for this to use a local file store
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "rolloutgym-test")
    out = tmp_path / "model"
    train_grpo(
        "trl/digits-v0",
        "hf:tiny",
        out=out,
        steps=2,
        max_tokens=4,
        num_generations=2,
        prompts_per_step=2,
        evaluate=False,
        threads=1,
        report_to=",".join(trackers),
    )
    if "tensorboard" in trackers:
        _check_tensorboard(out / "runs")
    if "mlflow" in trackers:
        _check_mlflow(store)
    if "wandb" in trackers:
        assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb")), "no offline W&B run written"


def _check_tensorboard(folder: Path) -> None:
    scalars = _scalars(folder)
    for name in ("train/loss", *(f"train/{metric}" for metric in ENV_METRICS)):
        assert len(scalars.get(name, [])) == 2, (name, sorted(scalars))
    assert all(0.0 <= value <= 1.0 for value in scalars["train/rolloutgym/pass_rate"])
    stops = [name for name in scalars if name.startswith("train/rolloutgym/stop/")]  # the share of each stop reason
    assert stops and all(len(scalars[name]) == 2 for name in stops)


def _check_mlflow(store: Path) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.as_uri())
    (experiment,) = [e for e in client.search_experiments() if e.name == "rolloutgym-test"]
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.data.params.get("run_name") == "model" or run.info.run_name == "model"
    for metric in ("loss", *ENV_METRICS):
        history = client.get_metric_history(run.info.run_id, metric)
        assert [point.step for point in history] == [1, 2], (metric, sorted(run.data.metrics))


def test_report_to_names_the_tracker_or_the_missing_package(tmp_path: Path, monkeypatch) -> None:
    assert report_to_options("none", tmp_path / "x") == {} and report_to_options(None, tmp_path) == {}
    real = importlib.util.find_spec
    installed = {"tensorboard", "mlflow"}  # as if both were installed (CI installs only tensorboard)
    with monkeypatch.context() as patch:
        patch.setattr(
            importlib.util, "find_spec", lambda name, *a: real("json") if name in installed else real(name, *a)
        )
        assert report_to_options("tensorboard, mlflow", tmp_path / "run-1") == {
            "report_to": ["tensorboard", "mlflow"],
            "run_name": "run-1",
        }
    with pytest.raises(ConfigError, match="unknown tracker 'comet'; use .*tensorboard, mlflow, wandb"):
        report_to_options("comet", tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a))
    with pytest.raises(ConfigError, match=r"wandb: the tracker library is not installed; .*pip install .*\[wandb\]"):
        report_to_options("wandb", tmp_path)
