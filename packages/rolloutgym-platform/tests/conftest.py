"""Fixtures of the platform tests: a real ``rolloutgym platform serve`` on 127.0.0.1 over a tmp data folder, on
SQLite (in the data folder) and on PostgreSQL (a private cluster that the tests initdb and start on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

pytest.importorskip("sqlalchemy", reason="the platform tests need the 'platform' extra")

from rolloutgym_testing.postgres import PostgresCluster, postgres_binaries  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def mint(data: Path, name: str, scope: str, org: str, database: str | None = None) -> str:
    command = [sys.executable, "-m", "rolloutgym", "platform", "keys", "create", "--data", str(data)]
    command += ["--name", name, "--scope", scope, "--org", org] + (["--database", database] if database else [])
    answer = subprocess.run(command, capture_output=True, text=True, check=True)
    return answer.stdout.strip()


@dataclass
class Server:
    url: str
    data: Path
    database: str | None
    process: subprocess.Popen
    keys: dict[str, str] = field(default_factory=dict)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)


def start_server(
    data: Path,
    database: str | None = None,
    workers: int = 2,
    lease: float = 20.0,
    *,
    env: dict[str, str] | None = None,
    new_session: bool = False,
    poll: float | None = None,
) -> Server:
    """``rolloutgym platform serve`` on a free port; ``new_session`` puts it and its workers in their own
    process group (so a test can kill the whole platform at once); ``poll``: the workers' and waiting clients'
    database poll interval (``--poll``)."""
    port = free_port()
    command = [sys.executable, "-m", "rolloutgym", "platform", "serve", "--data", str(data), "--port", str(port)]
    command += ["--workers", str(workers), "--lease", str(lease)] + (["--database", database] if database else [])
    command += ["--poll", str(poll)] if poll is not None else []
    data.mkdir(parents=True, exist_ok=True)
    log_path = data.parent / f"serve-{port}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **(env or {})),
            start_new_session=new_session,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the platform exited: {log_path.read_text()}")
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return Server(url, data, database, process)
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the platform did not answer within 90 s")


SLOW_PLUGIN = """
import time

from rolloutgym.builtin.toy import ArithmeticEnv
from rolloutgym_protocol import EnvSpec, hookimpl


class SlowArithmeticEnv(ArithmeticEnv):
    def evaluate(self, action):
        time.sleep(0.25)  # a slow grader: a run of a few tasks lasts long enough to be interrupted
        return super().evaluate(action)


@hookimpl
def rolloutgym_envs():
    return [EnvSpec(id="slowtest/arith-v0", entry_point="rolloutgym_slowtest:SlowArithmeticEnv",
                    tasks="rolloutgym.builtin.toy:arith_tasks", description="toy/arith-v0, graded slowly",
                    max_steps=1, replayable=True)]
"""


@pytest.fixture(scope="session")
def slow_plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An installed plugin (a dist-info on PYTHONPATH) with ``slowtest/arith-v0``: the environment variables
    that make it visible to a platform's API and workers."""
    root = tmp_path_factory.mktemp("slow-plugin")
    (root / "rolloutgym_slowtest.py").write_text(SLOW_PLUGIN)
    dist = root / "rolloutgym_slowtest-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rolloutgym-slowtest\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[rolloutgym]\nslowtest = rolloutgym_slowtest\n")
    return {"PYTHONPATH": os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster on 127.0.0.1 for the test session (:mod:`rolloutgym_testing.postgres`)."""
    if postgres_binaries() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; CI installs it)")
    with PostgresCluster.start(tmp_path_factory.mktemp("postgres")) as cluster:
        yield cluster


def database_for(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite in the data folder) or a fresh PostgreSQL database, by the fixture's parameter."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("postgres").new_database()


def _platform(root: Path, database: str | None, workers: int = 2, lease: float = 20.0) -> Server:
    data = root / "data"
    from rolloutgym_platform import db

    keys = {"all": mint(data, "all", "run,push,train", "acme", database)}  # through the CLI; the others in-process
    sessions = db.open_database(data, database)
    keys["run_only"] = db.create_key(sessions, name="runner", scopes=["run"], org="acme")
    keys["other_org"] = db.create_key(sessions, name="other", scopes=["run", "push", "train"], org="globex")
    sessions.kw["bind"].dispose()
    server = start_server(data, database, workers=workers, lease=lease)
    server.keys = keys
    return server


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def platform_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The platform on SQLite, then on PostgreSQL (one each per test session): a test that uses it runs on both."""
    server = _platform(tmp_path_factory.mktemp(f"platform-{request.param}"), database_for(request))
    yield server
    server.stop()


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME (credentials, cache) with no platform env vars."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "ROLLOUTGYM_API_KEY", "ROLLOUTGYM_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def wait_for(client, run_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get_run(run_id)
        if run["state"] not in ("queued", "running"):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish in {timeout} s: {run}")


os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def wait() -> object:
    """``wait(client, run_id)``: poll a run until it ends."""
    return wait_for


@pytest.fixture
def servers() -> object:
    """The helpers to start servers and mint keys, for tests that need their own platform."""
    import types

    return types.SimpleNamespace(start=start_server, mint=mint, free_port=free_port)
