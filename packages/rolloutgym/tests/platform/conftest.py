"""Fixtures of the platform tests: a real ``rolloutgym platform serve`` on 127.0.0.1 over a tmp data folder."""

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


def start_server(data: Path, database: str | None = None, workers: int = 2, lease: float = 20.0) -> Server:
    port = free_port()
    command = [sys.executable, "-m", "rolloutgym", "platform", "serve", "--data", str(data), "--port", str(port)]
    command += ["--workers", str(workers), "--lease", str(lease)] + (["--database", database] if database else [])
    data.mkdir(parents=True, exist_ok=True)
    with open(data.parent / f"serve-{port}.log", "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the platform exited: {(data.parent / f'serve-{port}.log').read_text()}")
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return Server(url, data, database, process)
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the platform did not answer within 60 s")


@pytest.fixture(scope="module")
def platform_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("platform")
    data = root / "data"
    from rolloutgym.platform import db

    keys = {"all": mint(data, "all", "run,push,train", "acme")}  # through the CLI; the others in-process
    sessions = db.open_database(data)
    keys["run_only"] = db.create_key(sessions, name="runner", scopes=["run"], org="acme")
    keys["other_org"] = db.create_key(sessions, name="other", scopes=["run", "push", "train"], org="globex")
    sessions.kw["bind"].dispose()
    server = start_server(data)
    server.keys = keys
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
