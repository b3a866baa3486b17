"""``ServerProcess``: ``rolloutgym serve`` in a child process on a free loopback port.

For tests, benchmarks and notebooks::

    with ServerProcess(["toy/guess-v0"]) as server:
        env = RemoteEnv(server.url("toy/guess-v0"), task=0)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from ._errors import RemoteEnvError

__all__ = ["ServerProcess", "free_port"]


class _ExitedEarly(RemoteEnvError):
    """The server process ended before answering (e.g. another process took the free port first)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """Start ``rolloutgym serve ENVS... OPTIONS`` and wait until ``/health`` answers.

    Args:
        envs: env ids / env files (empty: every registered env).
        options: more command-line options, e.g. ``["--idle-timeout", "2"]``.
        token: the bearer token (``--token``).
        env: extra environment variables for the server process.
    """

    def __init__(
        self,
        envs: Sequence[str] = (),
        options: Sequence[str] = (),
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        env: dict[str, str] | None = None,
        startup_timeout: float = 120.0,
        log_path: str | None = None,
    ) -> None:
        self.envs = list(envs)
        self.options = list(options)
        self.token = token
        self.host = host
        self.port = port
        self.extra_env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, env_id: str) -> str:
        """The URL of a served env: ``http://HOST:PORT/ENV_ID``."""
        return f"{self.base_url}/{env_id}"

    def start(self) -> ServerProcess:
        chosen = self.port is None
        for attempt in range(3):
            if chosen:
                self.port = free_port(self.host)
            try:
                return self._start()
            except _ExitedEarly:
                if not chosen or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _start(self) -> ServerProcess:
        command = [
            sys.executable,
            "-c",
            "from rolloutgym.cli import console_main; console_main()",
            "serve",
            *self.envs,
            "--host",
            self.host,
            "--port",
            str(self.port),
            *self.options,
        ]
        if self.token:
            command += ["--token", self.token]
        environment = {**os.environ, **self.extra_env}
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=self._log, env=environment, start_new_session=True
        )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        import httpx

        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.stop()
                raise _ExitedEarly(
                    f"rolloutgym serve exited with code {code} before answering (log: {self.log_path or 'not kept'})"
                )
            try:
                # Plain HTTP: no TLS context (httpx builds one per call otherwise, ~40 ms of CPU).
                if httpx.get(f"{self.base_url}/health", timeout=2.0, verify=False).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RemoteEnvError(f"rolloutgym serve did not answer on {self.base_url} within {self.startup_timeout:g} s")

    def stop(self, timeout: float = 30.0) -> int | None:
        """Graceful stop (SIGTERM: the server closes every session); SIGKILL after ``timeout``."""
        process, self.process = self.process, None
        code = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()
        self._log = None
        return code

    def kill(self) -> None:
        """Kill the server at once (SIGKILL, no cleanup), as a crash would."""
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
