"""A private podman API service on a unix socket in a folder the caller owns, for tests and benchmarks.

.. code-block:: python

    from rolloutgym_testing.podman import PodmanService, require_podman

    require_podman()  # skip (locally) or fail (under CI=true) when podman or the base image is missing
    with PodmanService.start(tmp_path) as service:
        provider = get_provider("docker", host=service.host)

The service is ``podman system service --time=0 unix://FOLDER/podman.sock`` (the Docker Engine API);
it shares the machine's podman storage (so the base images of ``scripts/build_base_images.sh`` are
there) and is stopped, with its process, when the block ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BASE_IMAGE", "PodmanService", "require_podman"]

BASE_IMAGE = "localhost/rolloutgym/bookworm-python:latest"


def _missing() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc mmdebstrap uidmap)"
    try:
        found = subprocess.run(["podman", "image", "exists", BASE_IMAGE], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"podman does not answer ({exc})"
    if found.returncode != 0:
        return (
            f"the base image {BASE_IMAGE} is missing: run scripts/build_base_images.sh (offline, from Debian's mirror)"
        )
    return None


def require_podman() -> None:
    """Skip (locally) or fail (under ``CI=true``) unless podman and the project's base image are there."""
    import pytest

    problem = _missing()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and the docker sandbox tests cannot run: {problem}", pytrace=False)
    pytest.skip(problem)


@dataclass
class PodmanService:
    """A running ``podman system service``; ``host`` is its ``unix://`` endpoint."""

    process: subprocess.Popen[bytes]
    folder: Path
    socket: Path

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    @classmethod
    def start(cls, folder: str | Path | None = None, *, wait: float = 60.0) -> PodmanService:
        """Start a service on ``FOLDER/podman.sock`` (a fresh temp folder by default) and wait until it answers."""
        folder = Path(folder or tempfile.mkdtemp(prefix="rolloutgym-podman-"))
        folder.mkdir(parents=True, exist_ok=True)
        sock = folder / "podman.sock"
        log = open(folder / "podman-service.log", "wb")  # noqa: SIM115 - the service writes it while it runs
        process = subprocess.Popen(
            ["podman", "system", "service", "--time=0", f"unix://{sock}"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        service = cls(process, folder, sock)
        deadline = time.monotonic() + wait
        while not service._answers():
            if process.poll() is not None or time.monotonic() > deadline:
                service.stop()
                tail = (folder / "podman-service.log").read_text(errors="replace")[-500:]
                raise RuntimeError(f"podman system service did not start on {sock}: {tail}")
            time.sleep(0.1)
        return service

    def _answers(self) -> bool:
        import socket

        if not self.socket.exists():
            return False
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(5)
            try:
                client.connect(str(self.socket))
                client.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
                return b"OK" in client.recv(4096)
            except OSError:
                return False

    def stop(self) -> None:
        """Stop the service (its containers stay: their owners or the reaper remove them)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def __enter__(self) -> PodmanService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
