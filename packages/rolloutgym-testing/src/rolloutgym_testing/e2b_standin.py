"""A local stand-in for E2B's API and its in-sandbox daemon (envd) on 127.0.0.1, speaking their wire format.

The shapes are those E2B's official Python SDK (``e2b`` 2.x) sends and parses: the control plane
(header ``X-API-KEY``) answers ``POST /sandboxes`` (``{"templateID", "timeout", "metadata",
"envVars", ...}`` -> ``{"sandboxID", "templateID", "clientID", "envdVersion", "envdAccessToken",
"domain"}``, 201), ``GET /sandboxes`` and ``DELETE /sandboxes/{id}`` (204); envd (the same
server, the sandbox named by the ``E2b-Sandbox-Id`` header, its token in ``X-Access-Token``)
answers Connect-RPC with the JSON codec: ``POST /process.Process/Start`` (a request envelope,
a stream of ``{"event": ...}`` envelopes: ``start`` with the pid, ``data`` with base64 ``stdout``,
``end`` with ``exitCode`` (left out when 0, as proto3 JSON does), then the end-of-stream
envelope), ``POST /process.Process/SendSignal``, ``POST /filesystem.Filesystem/Stat`` (an
``EntryInfo`` of the entry itself: ``isSymlink``, ``type``, ``size`` as a string) and
``GET``/``POST /files`` (multipart field ``file``, the path as its file name).

It is not a sandbox: commands run as this process's user, in a temp folder per sandbox that
stands for its ``/`` (the command's working folder is mapped into it; absolute paths in the
command itself are not), for tests only. Faults: ``fail_next`` (statuses answered to the next
``POST /sandboxes``), ``max_alive`` (more alive than this: 429 "concurrent sandboxes limit").
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import os
import secrets
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

__all__ = ["E2BStandIn"]


class E2BStandIn:
    """``with E2BStandIn(api_key="k") as service: service.url`` (the API's and envd's base URL)."""

    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.folder = Path(tempfile.mkdtemp(prefix="e2b-standin-"))
        self.sandboxes: dict[str, dict[str, Any]] = {}
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self.fail_next: list[tuple[int, str]] = []
        self.max_alive: int | None = None
        self.peak_alive = 0
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # method, path, headers
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInHandler)
        self.server.standin = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> E2BStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- the control plane --------------------------------------------------------------

    def create(self, body: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            if self.fail_next:
                status, message = self.fail_next.pop(0)
                return status, {"code": status, "message": message}
            if self.max_alive is not None and len(self.sandboxes) >= self.max_alive:
                return 429, {"code": 429, "message": "You have reached the maximum number of concurrent sandboxes"}
            sandbox = "i" + secrets.token_hex(9)
            root = self.folder / sandbox
            root.mkdir()
            record = {"root": root, "token": secrets.token_hex(8), "body": body}
            self.sandboxes[sandbox] = record
            self.peak_alive = max(self.peak_alive, len(self.sandboxes))
        answer = {
            "sandboxID": sandbox,
            "templateID": body.get("templateID", "base"),
            "clientID": "standin",
            "envdVersion": "0.4.0",
            "envdAccessToken": record["token"],
            "domain": None,
        }
        return 201, answer

    def listing(self) -> list[dict[str, Any]]:
        with self.lock:
            return [
                {"sandboxID": key, "templateID": value["body"].get("templateID"), "clientID": "standin",
                 "metadata": value["body"].get("metadata") or {}, "state": "running"}
                for key, value in self.sandboxes.items()
            ]  # fmt: skip

    def delete(self, sandbox: str) -> tuple[int, Any]:
        with self.lock:
            record = self.sandboxes.pop(sandbox, None)
        if record is None:
            return 404, {"code": 404, "message": f"sandbox {sandbox} not found"}
        shutil.rmtree(record["root"], ignore_errors=True)
        return 204, None

    # -- envd ---------------------------------------------------------------------------

    def place(self, sandbox: str, path: str) -> Path:
        root = self.sandboxes[sandbox]["root"]
        target = Path(os.path.normpath(root / path.lstrip("/")))
        if not target.is_relative_to(root):
            raise PermissionError(path)
        return target

    def start(self, sandbox: str, request: dict[str, Any]) -> subprocess.Popen[bytes]:
        process = request["process"]
        cwd = self.place(sandbox, process.get("cwd") or "/")
        cwd.mkdir(parents=True, exist_ok=True)
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(process.get("envs") or {})}
        started = subprocess.Popen(
            [process["cmd"], *(process.get("args") or [])],
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with self.lock:
            self.processes[started.pid] = started
        return started

    def kill(self, pid: int) -> None:
        with self.lock:
            process = self.processes.get(pid)
        if process is not None:
            os.killpg(process.pid, signal.SIGKILL)

    def stat(self, sandbox: str, path: str) -> tuple[int, Any]:
        target = self.place(sandbox, path)
        try:
            found = target.lstat()
        except FileNotFoundError:
            return 404, {"code": "not_found", "message": f"no such file or directory: {path}"}
        link = target.is_symlink()
        kind = "FILE_TYPE_DIRECTORY" if target.is_dir() else "FILE_TYPE_FILE"
        entry = {"name": target.name, "type": kind, "path": path, "size": str(found.st_size), "mode": found.st_mode}
        if link:
            entry.update({"isSymlink": True, "symlinkTarget": os.readlink(target)})
        return 200, {"entry": entry}


def _envelope(message: dict[str, Any], flags: int = 0) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack(">BI", flags, len(data)) + data


class _StandInHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def service(self) -> E2BStandIn:
        return self.server.standin  # type: ignore[attr-defined,no-any-return]

    def log_message(self, *args: Any) -> None:
        return None

    def _answer(self, status: int, body: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream" if raw is not None else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str) -> None:
        parsed = urlparse(self.path)
        query = {key: values[0] for key, values in parse_qs(parsed.query).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.service.requests.append((method, parsed.path, dict(self.headers)))
        try:
            if parsed.path.startswith("/sandboxes"):
                return self._control(method, parsed.path, body)
            sandbox = self.headers.get("E2b-Sandbox-Id", "")
            if sandbox not in self.service.sandboxes:
                return self._answer(502, {"code": 502, "message": f"The sandbox {sandbox} was not found"})
            if self.headers.get("X-Access-Token") != self.service.sandboxes[sandbox]["token"]:
                return self._answer(401, {"code": "unauthenticated", "message": "invalid access token"})
            self._envd(method, parsed.path, query, body, sandbox)
        except (KeyError, PermissionError) as exc:
            self._answer(404, {"code": 404, "message": f"not found: {exc}"})

    def _control(self, method: str, path: str, body: bytes) -> None:
        if self.headers.get("X-API-KEY") != self.service.api_key:
            return self._answer(401, {"code": 401, "message": "Invalid API key"})
        parts = [part for part in path.split("/") if part]
        if method == "POST" and len(parts) == 1:
            return self._answer(*self.service.create(json.loads(body or b"{}")))
        if method == "GET" and len(parts) == 1:
            return self._answer(200, self.service.listing())
        if method == "DELETE" and len(parts) == 2:
            return self._answer(*self.service.delete(parts[1]))
        return self._answer(404, {"code": 404, "message": f"no route {method} {path}"})

    def _envd(self, method: str, path: str, query: dict[str, str], body: bytes, sandbox: str) -> None:
        if method == "POST" and path == "/process.Process/Start":
            return self._start(sandbox, json.loads(body[5:]))
        if method == "POST" and path == "/process.Process/SendSignal":
            self.service.kill(int(json.loads(body)["process"]["pid"]))
            return self._answer(200, {})
        if method == "POST" and path == "/filesystem.Filesystem/Stat":
            return self._answer(*self.service.stat(sandbox, json.loads(body)["path"]))
        if method == "GET" and path == "/files":
            target = self.service.place(sandbox, query["path"])
            if not target.is_file():
                return self._answer(404, {"code": 404, "message": "file not found"})
            return self._answer(200, None, raw=target.read_bytes())
        if method == "POST" and path == "/files":
            written = []
            for name, data in _multipart_files(self.headers.get("Content-Type", ""), body):
                target = self.service.place(sandbox, query.get("path") or name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append({"name": target.name, "type": "file", "path": query.get("path") or name})
            return self._answer(200, written)
        return self._answer(404, {"code": 404, "message": f"no route {method} {path}"})

    def _start(self, sandbox: str, request: dict[str, Any]) -> None:
        process = self.service.start(sandbox, request)
        try:
            self._stream(process)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (past its deadline)
        finally:
            process.stdout.close()  # type: ignore[union-attr]

    def _stream(self, process: subprocess.Popen[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/connect+json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._chunk(_envelope({"event": {"start": {"pid": process.pid}}}))
        assert process.stdout is not None
        while data := process.stdout.read1(65536):
            self._chunk(_envelope({"event": {"data": {"stdout": base64.b64encode(data).decode()}}}))
        code = process.wait()
        end: dict[str, Any] = {
            "exited": code >= 0,
            "status": f"exit status {code}" if code >= 0 else "signal: killed",
        }
        if code > 0:
            end["exitCode"] = code
        self._chunk(_envelope({"event": {"end": end}}))
        self._chunk(_envelope({}, flags=2))
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")


def _multipart_files(content_type: str, body: bytes) -> list[tuple[str, bytes]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    found = []
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            found.append((str(part.get_filename() or ""), bytes(part.get_payload(decode=True) or b"")))
    return found
