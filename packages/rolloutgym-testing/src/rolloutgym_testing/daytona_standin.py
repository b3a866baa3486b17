"""A local stand-in for Daytona's API on 127.0.0.1, speaking its documented wire format.

The JSON shapes and paths are those of Daytona's OpenAPI description (the models its official
``daytona-api-client`` and ``daytona-toolbox-api-client`` are generated from): ``POST /sandbox``
answers a ``Sandbox`` (camelCase, ``toolboxProxyUrl``), ``DELETE /sandbox/{id}``; the toolbox
(``{toolboxProxyUrl}/{id}``) answers ``POST /process/execute`` (``{command, cwd, envs, timeout}``
-> ``{exitCode, result}``), ``POST /files/upload-v2?path=`` (multipart field ``file``, what the client sends),
``GET /files/info?path=`` (``FileInfo``, of the entry itself: a link reads as mode ``L...``) and
``GET /files/download?path=``. It is not a sandbox: commands run as this process's user in a
temp folder per sandbox (absolute paths of the toolbox calls are mapped into it), for tests only.

Faults, for the tests of retries and quotas: ``fail_next`` (statuses answered to the next
``POST /sandbox`` calls: 503 is retried by the client, 429/403 with a quota message are not),
``max_alive`` (more sandboxes alive than this answer 403 "quota exceeded"), and ``peak_alive``.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import secrets
import shutil
import stat
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

__all__ = ["DaytonaStandIn"]


class DaytonaStandIn:
    """``with DaytonaStandIn(api_key="k") as service: service.url`` (the API's base URL)."""

    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.folder = Path(tempfile.mkdtemp(prefix="daytona-standin-"))
        self.sandboxes: dict[str, Path] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self.fail_next: list[tuple[int, str]] = []
        self.max_alive: int | None = None
        self.peak_alive = 0
        self.created = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def __enter__(self) -> DaytonaStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- the API ------------------------------------------------------------------------

    def create(self, body: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            if self.fail_next:
                status, message = self.fail_next.pop(0)
                return status, {"statusCode": status, "message": message}
            if self.max_alive is not None and len(self.sandboxes) >= self.max_alive:
                return 403, {"statusCode": 403, "message": "Total CPU quota exceeded: delete sandboxes first"}
            sandbox = secrets.token_hex(8)
            root = self.folder / sandbox
            root.mkdir()
            self.sandboxes[sandbox] = root
            self.created += 1
            self.peak_alive = max(self.peak_alive, len(self.sandboxes))
        answer = {
            "id": sandbox,
            "organizationId": "org-standin",
            "name": sandbox,
            "snapshot": body.get("snapshot"),
            "user": body.get("user") or "daytona",
            "env": body.get("env") or {},
            "labels": body.get("labels") or {},
            "public": False,
            "networkBlockAll": bool(body.get("networkBlockAll", False)),
            "kvm": False,
            "target": "standin",
            "cpu": body.get("cpu") or 1,
            "gpu": 0,
            "memory": body.get("memory") or 1,
            "disk": body.get("disk") or 1,
            "state": "started",
            "toolboxProxyUrl": f"{self.url.rsplit('/api', 1)[0]}/toolbox",
        }
        self.answers[sandbox] = answer
        return 200, answer

    def delete(self, sandbox: str) -> tuple[int, Any]:
        with self.lock:
            root = self.sandboxes.pop(sandbox, None)
        if root is None:
            return 404, {"statusCode": 404, "message": f"Sandbox {sandbox} not found"}
        shutil.rmtree(root, ignore_errors=True)
        return 200, {**self.answers.pop(sandbox), "state": "destroyed"}

    def place(self, sandbox: str, path: str) -> Path:
        root = self.sandboxes[sandbox]
        target = Path(os.path.normpath(root / path.lstrip("/")))
        if not target.is_relative_to(root):
            raise PermissionError(path)
        return target

    def execute(self, sandbox: str, body: dict[str, Any]) -> tuple[int, Any]:
        cwd = self.place(sandbox, body.get("cwd") or "/")
        cwd.mkdir(parents=True, exist_ok=True)
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(body.get("envs") or {})}
        try:
            done = subprocess.run(
                body["command"],
                shell=True,
                cwd=cwd,
                env=environment,
                capture_output=True,
                timeout=body.get("timeout") or 10,
            )
            return 200, {"exitCode": done.returncode, "result": (done.stdout + done.stderr).decode("utf-8", "replace")}
        except subprocess.TimeoutExpired as exc:
            return 200, {
                "exitCode": -1,
                "result": ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace"),
            }

    def info(self, sandbox: str, path: str) -> tuple[int, Any]:
        target = self.place(sandbox, path)
        try:
            found = target.lstat()
        except FileNotFoundError:
            return 404, {"statusCode": 404, "message": f"file {path} not found"}
        mode = stat.filemode(found.st_mode)
        mode = ("L" + mode[1:]) if stat.S_ISLNK(found.st_mode) else mode
        return 200, {
            "group": "daytona",
            "isDir": stat.S_ISDIR(found.st_mode),
            "modTime": "0",
            "mode": mode,
            "name": target.name,
            "owner": "daytona",
            "path": path,
            "permissions": oct(found.st_mode & 0o777),
            "size": found.st_size,
        }


def _handler(service: DaytonaStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
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
            if self.headers.get("Authorization") != f"Bearer {service.api_key}":
                return self._answer(401, {"statusCode": 401, "message": "Unauthorized"})
            parsed = urlparse(self.path)
            query = {key: values[0] for key, values in parse_qs(parsed.query).items()}
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = [part for part in parsed.path.split("/") if part]
            try:
                self._dispatch(method, parts, query, body)
            except (KeyError, PermissionError) as exc:
                self._answer(404, {"statusCode": 404, "message": f"not found: {exc}"})

        def _dispatch(self, method: str, parts: list[str], query: dict[str, str], body: bytes) -> None:
            if parts[:2] == ["api", "sandbox"]:
                if method == "POST" and len(parts) == 2:
                    return self._answer(*service.create(json.loads(body or b"{}")))
                if method == "DELETE" and len(parts) == 3:
                    return self._answer(*service.delete(parts[2]))
            if parts[:1] == ["toolbox"] and len(parts) >= 3:
                sandbox, call = parts[1], "/".join(parts[2:])
                if method == "POST" and call == "process/execute":
                    return self._answer(*service.execute(sandbox, json.loads(body)))
                if method == "GET" and call == "files/info":
                    return self._answer(*service.info(sandbox, query["path"]))
                if method == "GET" and call == "files/download":
                    target = service.place(sandbox, query["path"])
                    if not target.is_file():
                        return self._answer(404, {"statusCode": 404, "message": "file not found"})
                    return self._answer(200, None, raw=target.read_bytes())
                if method == "POST" and call in ("files/upload", "files/upload-v2"):
                    target = service.place(sandbox, query["path"])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(_multipart_file(self.headers.get("Content-Type", ""), body))
                    return self._answer(200, {"name": target.name, "path": query["path"], "type": "file"})
            return self._answer(404, {"statusCode": 404, "message": f"no route {method} /{'/'.join(parts)}"})

        def do_GET(self) -> None:  # noqa: N802 - http.server's names
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self._route("DELETE")

    return Handler


def _multipart_file(content_type: str, body: bytes) -> bytes:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            return bytes(part.get_payload(decode=True) or b"")
    return body
