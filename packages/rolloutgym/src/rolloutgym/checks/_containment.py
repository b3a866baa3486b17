"""Containment, measured: from inside the agent's sandbox, try the network, host paths and package files.

Only for envs whose tools reach a sandbox (a shell tool or file tools). Canaries make it a
measurement, not a guess: a file with a random token in a host temp folder, a line of the
env's own package source, and an HTTP server on the host's 127.0.0.1 that answers a token.
Whatever token comes back in an observation was reachable.
"""

from __future__ import annotations

import http.server
import secrets
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ._episodes import EpisodeRunner
from ._records import FAIL, PASS, SKIP, WARN, CheckResult
from .probes import EnvView, HackProbe, ProbeNotApplicable

__all__ = ["containment_result"]


class _Canaries:
    def __init__(self) -> None:
        self.token = secrets.token_hex(12)
        self.folder = Path(tempfile.mkdtemp(prefix="rolloutgym-canary-"))
        self.file = self.folder / "canary.txt"
        self.file.write_text(f"host-file-{self.token}\n")
        self.package_file: Path | None = None
        self.package_line: str | None = None
        token = self.token

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                body = f"network-{token}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _distinctive_line(path: Path) -> str | None:
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except OSError:
        return None
    return next((line for line in lines if len(line) >= 30 and not line.startswith(("#", "import", "from"))), None)


class _Prober(HackProbe):
    name = "containment"

    def __init__(self, canaries: _Canaries) -> None:
        super().__init__()
        self.canaries = canaries

    def for_env(self, environment: Any) -> Any:
        module = sys.modules.get(type(_innermost(environment)).__module__)
        if module is not None and getattr(module, "__file__", None):
            self.canaries.package_file = Path(str(module.__file__))
            self.canaries.package_line = _distinctive_line(self.canaries.package_file)
        return super().for_env(environment)

    def applies(self, view: EnvView) -> str | None:
        if view.shell_tool() or view.file_tool("read"):
            return None
        return "the env has no shell or file tools (nothing runs in a sandbox)"

    def play(self, view: EnvView) -> Any:
        canaries = self.canaries
        shell = view.shell_tool()
        if shell is not None:
            package = f" {canaries.package_file}" if canaries.package_file else ""
            url = canaries.url
            command = (
                f"cat {canaries.file}{package} 2>&1 | head -c 200000; "
                f"curl -s -m 5 {url} 2>&1 || wget -q -T 5 -O - {url} 2>&1 || "
                f"python3 -c \"import urllib.request;print(urllib.request.urlopen('{url}',timeout=5).read())\" 2>&1; "
                "true"
            )
            yield view.call(shell[0], {shell[1]: command})
            return
        read = view.file_tool("read")
        assert read is not None
        for path in [canaries.file, canaries.package_file]:
            if path is not None:
                yield view.call(read[0], {read[1]: str(path)})


async def containment_result(runner: EpisodeRunner, indices: list[int]) -> CheckResult:
    """What the agent's side reached: host files, the env's package source, the host's network."""
    if not indices:
        return CheckResult("containment", SKIP, "no task to run it on")
    canaries = _Canaries()
    try:
        episode = await runner.run(_Prober(canaries), indices[0], seed=0)
    finally:
        canaries.close()
    if isinstance(episode.policy_error, ProbeNotApplicable):
        return CheckResult("containment", SKIP, f"not applicable: {episode.policy_error}")
    if episode.trajectory is None:
        return CheckResult("containment", WARN, f"the containment episode raised: {episode.error}")
    seen = "\n".join(str(step.next_observation) for step in episode.trajectory.steps)
    reached = []
    if f"host-file-{canaries.token}" in seen:
        reached.append(f"host files (read {canaries.file})")
    if canaries.package_line and canaries.package_line in seen:
        reached.append(f"the env's package source ({canaries.package_file})")
    if f"network-{canaries.token}" in seen:
        reached.append("the network (an HTTP server on the host's 127.0.0.1)")
    tried = ["host files", "the env's package source" if canaries.package_line else None, "the network"]
    metrics = {"tried": [item for item in tried if item], "reachable": reached}
    if reached:
        return CheckResult(
            "containment", FAIL, "reachable from the agent's side: " + "; ".join(reached), reached, metrics
        )
    return CheckResult(
        "containment", PASS, "measured: " + ", ".join(metrics["tried"]) + " not reachable", metrics=metrics
    )


def _innermost(environment: Any) -> Any:
    """The env under adapters and wrappers (``.env`` chains, then ``.unwrapped``)."""
    seen = set()
    while id(environment) not in seen and getattr(environment, "env", None) is not None:
        seen.add(id(environment))
        environment = environment.env
    return getattr(environment, "unwrapped", environment)
