"""The host's side of the exec agent (:mod:`._box_agent`): a folder per container, readiness, calls.

A container started with the agent gets a host folder of its own, bind-mounted at ``/.rolloutgym``;
the agent listens on ``agent.sock`` there. A call is one connection to that socket: no engine
round trip, no ``runc exec``. Where the agent cannot start (no Python 3.9 in the image, an
engine on another machine) the folder gets ``no-agent`` (or nothing) and the provider uses the
engine's exec for that container.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._owner import owner_alive

__all__ = ["MOUNT", "AgentFolders", "AgentGone", "agent_entrypoint", "call"]

MOUNT = "/.rolloutgym"
_PREFIX = "rolloutgym-agent-"
_SCRIPT = Path(__file__).with_name("_box_agent.py")


def agent_entrypoint() -> list[str]:
    """The container's command: the agent where the image has Python 3.9+, else ``sleep infinity``."""
    probe = "import sys; sys.exit(sys.version_info < (3, 9))"
    return [
        "/bin/sh",
        "-c",
        f"python3 -I -S -c '{probe}' 2>/dev/null && exec python3 -I -S {MOUNT}/agent.py; "
        f": > {MOUNT}/no-agent; exec sleep infinity",
    ]


class AgentGone(Exception):
    """The agent did not answer (the sandbox died, or the agent was killed)."""


class AgentFolders:
    """Host folders for the agents of one provider: ``TMP/rolloutgym-agent-<owner>-*/<container name>``."""

    def __init__(self, owner: str) -> None:
        tag = owner.replace("/", "-")
        self.root = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{tag}-"))
        (self.root / "owner").write_text(owner)

    def make(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir(mode=0o700)
        shutil.copyfile(_SCRIPT, folder / "agent.py")
        return folder

    @staticmethod
    def remove(folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @staticmethod
    def reap() -> int:
        """Remove the agent folders of providers whose process is gone."""
        removed = 0
        for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
            try:
                owner = (folder / "owner").read_text()
            except OSError:
                continue
            if not owner_alive(owner):
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        return removed


def wait_ready(folder: Path, seconds: float) -> bool:
    """Whether the agent in ``folder`` answers within ``seconds`` (False at once on ``no-agent``)."""
    deadline = time.monotonic() + seconds
    sock = folder / "agent.sock"
    while time.monotonic() < deadline:
        if (folder / "no-agent").exists():
            return False
        if sock.exists():
            try:
                return bool(call(sock, {"op": "ping"}, timeout=5.0)[0].get("ok"))
            except AgentGone:
                pass
        time.sleep(0.01)
    return False


def call(
    sock: Path, request: Mapping[str, Any], *, stdin: bytes = b"", timeout: float = 60.0
) -> tuple[dict[str, Any], bytes]:
    """One call: the answer's header and its payload. Raises :class:`AgentGone` when no answer comes."""
    body = dict(request)
    if stdin:
        body["stdin_size"] = len(stdin)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            _connect(conn, sock)
            conn.sendall(json.dumps(body).encode() + b"\n" + stdin)
            with conn.makefile("rb") as reader:
                line = reader.readline()
                if not line:
                    raise AgentGone("the sandbox's agent closed the connection without an answer")
                header = json.loads(line)
                payload = reader.read(int(header.get("size", 0)))
    except (OSError, ValueError) as exc:
        raise AgentGone(f"the sandbox's agent did not answer ({type(exc).__name__})") from None
    return header, payload


def _connect(conn: socket.socket, sock: Path) -> None:
    """Connect to the socket file itself, never through a link: root in the sandbox can replace
    what lies in its folder, and a link there must not send this process to a host socket."""
    handle = os.open(sock, os.O_PATH | os.O_NOFOLLOW)
    try:
        if not stat.S_ISSOCK(os.fstat(handle).st_mode):
            raise AgentGone(f"{sock} is not a socket")
        conn.connect(f"/proc/self/fd/{handle}")
    finally:
        os.close(handle)
