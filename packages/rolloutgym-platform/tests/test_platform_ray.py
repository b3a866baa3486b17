"""``platform serve --ray ADDRESS``: the wiring, tested without starting a Ray cluster (slow): the workers are
started with ``--ray ADDRESS`` and run each run with rolloutgym's Ray executor at that address (the executor
itself is tested against a local Ray cluster in test_ray_executor.py)."""

from __future__ import annotations

from pathlib import Path

from rolloutgym_platform import db, server, worker_runs
from rolloutgym_platform.models import EnvVersion, RunRow


def test_ray_address_reaches_the_workers_run_config(tmp_path: Path) -> None:
    command = server.worker_command(tmp_path, None, 30.0, "ray://head:10001")
    assert command[command.index("--ray") + 1] == "ray://head:10001"
    assert "--ray" not in server.worker_command(tmp_path, None, 30.0)

    sessions = db.open_database(tmp_path)
    with sessions.begin() as session:
        version = EnvVersion(org="acme", slug="toy/arith-v0", version="v", kind="id", entry="toy/arith-v0", files=[])
        session.add(version)
        session.flush()
        run = RunRow(id="run_000000000001", org="acme", env_slug="toy/arith-v0", env_version_id=version.id)
        run.policy, run.n, run.options = "oracle", 2, {"limit": 3, "env_version": "v"}
        session.add(run)
    out = tmp_path / "run.jsonl"
    on_ray = worker_runs._run_config(sessions, tmp_path, run, out, "ray://head:10001")
    assert on_ray.executor == "ray" and on_ray.executor_options == {"address": "ray://head:10001"}
    assert (on_ray.env, on_ray.num_rollouts, on_ray.limit, on_ray.resume) == ("toy/arith-v0", 2, 3, True)
    assert worker_runs._run_config(sessions, tmp_path, run, out).executor == "local"
    sessions.kw["bind"].dispose()
