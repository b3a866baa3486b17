"""The ``e2b`` provider: sandboxes on E2B's service, past one machine, with httpx on E2B's wire format.

The wire format is the one E2B's official Python SDK (``e2b`` 2.x) speaks, read from its source:

* **Control plane** (``https://api.{domain}``, header ``X-API-KEY``): ``POST /sandboxes``
  ``{"templateID", "timeout", "metadata", "envVars", "allow_internet_access", "secure"}`` answers
  ``{"sandboxID", "envdAccessToken", "domain", ...}``; ``DELETE /sandboxes/{id}``;
  ``GET /sandboxes`` lists the running ones (``metadata`` included) for the reaper.
* **envd** in the sandbox (``https://49983-{sandboxID}.{domain}``, headers ``X-Access-Token``,
  ``E2b-Sandbox-Id``, ``E2b-Sandbox-Port`` and ``Authorization: Basic base64("user:")`` naming
  the user): commands through Connect-RPC with the JSON codec, ``POST /process.Process/Start``
  (``application/connect+json``; a request envelope ``{"process": {"cmd", "args", "envs",
  "cwd"}}``, a stream of ``{"event": {"start"|"data"|"end"|"keepalive": ...}}`` envelopes with
  base64 ``stdout``/``stderr`` and ``end.exitCode``, then the end-of-stream envelope, flag 2);
  past the deadline ``POST /process.Process/SendSignal`` (``SIGNAL_SIGKILL``); files through
  ``POST /files`` (multipart field ``file``, the path as its file name), ``GET /files?path=`` and
  ``POST /filesystem.Filesystem/Stat`` (the entry itself: ``isSymlink``), so a link on the way
  to a file read out leaves it out.

What it adds for fleets, as the daytona provider: at most ``max_concurrent`` sandboxes at once,
retries with backoff on connection errors and 5xx, quota/rate answers (429, 403 naming a quota
or limit) raised at once as :class:`SandboxInfraError` (an infrastructure failure, never a 0).
Images are E2B templates (``image=`` names one; default ``base``); limits are the template's.

Tested against that wire format with a local stand-in server on 127.0.0.1
(``rolloutgym_testing.e2b_standin``): there is no network in the project's test machines and
no E2B account.
"""

from __future__ import annotations

import base64
import json
import os
import posixpath
import shlex
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

from ._contract import LABEL, ExecResult, ResourceLimits, RunningSandbox, SandboxInfraError, SandboxProvider
from ._owner import owner_alive, owner_label

__all__ = ["E2BProvider", "E2BSandbox", "envelope", "read_envelopes"]

T = TypeVar("T")
ENVD_PORT = 49983
_QUOTA_WORDS = ("quota", "limit", "exceed", "insufficient", "too many")


def envelope(message: Mapping[str, Any], flags: int = 0) -> bytes:
    """One Connect streaming envelope: a flags byte, the big-endian length, the JSON message."""
    data = json.dumps(message).encode()
    return struct.pack(">BI", flags, len(data)) + data


def read_envelopes(chunks: Iterator[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(flags, message)`` for each envelope of a Connect stream."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= 5:
            flags, size = struct.unpack(">BI", buffer[:5])
            if len(buffer) < 5 + size:
                break
            yield flags, json.loads(buffer[5 : 5 + size] or b"{}")
            buffer = buffer[5 + size :]


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        from ..install_hints import pip_install

        raise SandboxInfraError(f"the e2b sandbox provider needs httpx: {pip_install('rolloutgym', 'e2b')}") from None
    return httpx


class E2BProvider(SandboxProvider):
    """Sandboxes on E2B.

    Args:
        api_key: the API key (default ``E2B_API_KEY``).
        domain: E2B's domain (default ``E2B_DOMAIN``, else ``e2b.app``).
        api_url: the control plane's URL (default ``E2B_API_URL``, else ``https://api.{domain}``).
        sandbox_url: envd's URL for every sandbox (default ``E2B_SANDBOX_URL``, else
            ``https://49983-{id}.{domain}``); the SDK's override of the same name.
        template: the template of ``create()`` without ``image=``.
        lifetime: seconds E2B keeps a sandbox alive unless it is deleted first.
        max_concurrent: sandboxes alive at once; ``create`` waits for a slot.
        retries: attempts after the first on a connection error or a 5xx answer.
        backoff: seconds before the first retry (doubled each time).
    """

    name = "e2b"
    capabilities = frozenset({"image", "network"})

    def __init__(
        self,
        api_key: str | None = None,
        *,
        domain: str | None = None,
        api_url: str | None = None,
        sandbox_url: str | None = None,
        template: str = "base",
        lifetime: int = 3600,
        max_concurrent: int = 16,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        self.httpx = _httpx()
        self.api_key = api_key or os.environ.get("E2B_API_KEY", "")
        self.domain = domain or os.environ.get("E2B_DOMAIN") or "e2b.app"
        self.api_url = (api_url or os.environ.get("E2B_API_URL") or f"https://api.{self.domain}").rstrip("/")
        self.sandbox_url = (sandbox_url or os.environ.get("E2B_SANDBOX_URL") or "").rstrip("/")
        self.template, self.lifetime = template, int(lifetime)
        self.retries, self.backoff = max(0, int(retries)), float(backoff)
        self.slots = threading.BoundedSemaphore(max(1, int(max_concurrent)))
        self.owner = owner_label()
        self.http = self.httpx.Client(timeout=60.0)

    def check(self) -> None:
        if not self.api_key:
            raise SandboxInfraError("the e2b provider needs an API key: set E2B_API_KEY or pass api_key=...")

    def call(self, what: str, function: Callable[[], Any]) -> Any:
        """``function()`` (an httpx response) with retries on transient failures; failures as one line."""
        delay = self.backoff
        for attempt in range(self.retries + 1):
            try:
                response = function()
            except self.httpx.TransportError as exc:
                status, text = None, type(exc).__name__
            else:
                if response.status_code < 400:
                    return response
                status, text = response.status_code, response.text.replace("\n", " ")[:300]
                if status == 429 or status == 403 and any(word in text.lower() for word in _QUOTA_WORDS):
                    raise SandboxInfraError(f"E2B refused {what}: quota or rate limit ({status}): {text}")
            if status is not None and status < 500 or attempt == self.retries:
                raise SandboxInfraError(f"E2B: {what} failed ({status or text}): {text}")
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _api(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"X-API-KEY": self.api_key}
        return lambda: self.http.request(method, f"{self.api_url}{path}", headers=headers, **kwargs)

    def create(
        self,
        *,
        image: str | None = None,
        build: Any = None,
        limits: ResourceLimits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> E2BSandbox:
        if build is not None:
            raise SandboxInfraError("the e2b provider runs templates (image=...); it does not build Dockerfiles")
        self.check()
        body = {
            "templateID": image or self.template,
            "timeout": self.lifetime,
            "metadata": {**(labels or {}), LABEL: "sandbox", f"{LABEL}.owner": self.owner},
            "envVars": dict(env or {}),
            "allow_internet_access": bool(network),
            "secure": True,
        }
        self.slots.acquire()
        sandbox = E2BSandbox(self, workdir or "/home/user", user or "user")
        try:
            with sandbox.stages.measure("create"):
                made = self.call("creating a sandbox", self._api("POST", "/sandboxes", json=body)).json()
            sandbox.attach(made)
        except BaseException:
            self.slots.release()
            raise
        return sandbox

    def envd_url(self, sandbox_id: str, domain: str | None) -> str:
        return self.sandbox_url or f"https://{ENVD_PORT}-{sandbox_id}.{domain or self.domain}"

    def reap(self) -> int:
        """Delete the sandboxes labelled by rolloutgym whose owning process is gone."""
        removed = 0
        for found in self.call("listing sandboxes", self._api("GET", "/sandboxes")).json() or []:
            metadata = found.get("metadata") or {}
            if metadata.get(LABEL) and not owner_alive(metadata.get(f"{LABEL}.owner", "")):
                self.call("deleting a sandbox", self._api("DELETE", f"/sandboxes/{found['sandboxID']}"))
                removed += 1
        return removed

    def close(self) -> None:
        self.http.close()


class E2BSandbox(RunningSandbox):
    """One E2B sandbox (made by :meth:`E2BProvider.create`)."""

    provider = "e2b"

    def __init__(self, owner: E2BProvider, workdir: str, user: str) -> None:
        super().__init__()
        self._owner, self.workdir, self.user = owner, workdir, user
        self._destroyed = False
        self._url = ""
        self._token = ""

    def attach(self, made: Mapping[str, Any]) -> None:
        self.id, self.image = str(made["sandboxID"]), str(made.get("templateID", ""))
        self._url = self._owner.envd_url(self.id, made.get("domain"))
        self._token = str(made.get("envdAccessToken") or "")

    def _headers(self, user: str | None) -> dict[str, str]:
        who = base64.b64encode(f"{user or self.user}:".encode()).decode()
        headers = {"Authorization": f"Basic {who}", "E2b-Sandbox-Id": self.id, "E2b-Sandbox-Port": str(ENVD_PORT)}
        if self._token:
            headers["X-Access-Token"] = self._token
        return headers

    def exec(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
        stdin: bytes | None = None,
        max_output_bytes: int = 1 << 20,
    ) -> ExecResult:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if stdin is not None:
            name = f"/tmp/.rolloutgym-stdin-{time.monotonic_ns()}"
            self.write_files({os.path.basename(name): stdin}, "/tmp", user=user)
            argv = ["/bin/sh", "-c", f"exec {shlex.join(argv)} < {name}"]
        process = {"cmd": argv[0], "args": argv[1:], "envs": dict(env or {}), "cwd": workdir or self.workdir}
        seconds = max(0.1, float(timeout))
        stage = self.stages.measure("first_exec") if "first_exec" not in self.stages else nullcontext()
        with stage:
            return self._run(process, seconds, user, max_output_bytes)

    def _run(self, process: Mapping[str, Any], seconds: float, user: str | None, limit: int) -> ExecResult:
        headers = {
            **self._headers(user),
            "Content-Type": "application/connect+json",
            "Connect-Protocol-Version": "1",
            "Connect-Timeout-Ms": str(int((seconds + 5) * 1000)),
        }
        httpx = self._owner.httpx
        started = time.monotonic()
        state: dict[str, Any] = {"kept": bytearray(), "truncated": False, "pid": None, "end": None}
        timeout = httpx.Timeout(30.0, read=seconds + 0.5)  # no byte by the deadline: killed
        try:
            with self._owner.http.stream(
                "POST",
                f"{self._url}/process.Process/Start",
                headers=headers,
                content=envelope({"process": process}),
                timeout=timeout,
            ) as response:
                if response.status_code != 200:
                    response.read()
                    raise SandboxInfraError(f"E2B: running a command failed ({response.status_code}): {response.text}")
                self._consume(response.iter_raw(), state, started + seconds, limit)
        except httpx.ReadTimeout:
            pass
        except httpx.TransportError as exc:
            raise SandboxInfraError(
                f"the E2B sandbox {self.id} is gone or unreachable ({type(exc).__name__})"
            ) from None
        return self._result(state, started, user)

    def _consume(self, chunks: Iterator[bytes], state: dict[str, Any], deadline: float, limit: int) -> None:
        for flags, message in read_envelopes(chunks):
            if flags & 2:
                error = message.get("error")
                if error and error.get("code") != "deadline_exceeded":
                    raise SandboxInfraError(f"E2B: the command failed to run: {error.get('message', error)}")
                return
            event = message.get("event") or {}
            if "start" in event:
                state["pid"] = int(event["start"].get("pid", 0))
            for stream in ("stdout", "stderr"):
                data = base64.b64decode((event.get("data") or {}).get(stream, "") or "")
                kept: bytearray = state["kept"]
                state["truncated"] = state["truncated"] or len(kept) + len(data) > limit
                kept += data[: max(0, limit - len(kept))]
            if "end" in event:
                state["end"] = event["end"]
            if time.monotonic() > deadline:
                return

    def _result(self, state: dict[str, Any], started: float, user: str | None) -> ExecResult:
        duration = time.monotonic() - started
        output = bytes(state["kept"]).decode("utf-8", errors="replace")
        end = state["end"]
        if end is None:  # past the deadline: kill it
            if state["pid"]:
                signal = {"process": {"pid": state["pid"]}, "signal": "SIGNAL_SIGKILL"}
                headers = {**self._headers(user), "Content-Type": "application/json", "Connect-Protocol-Version": "1"}
                url = f"{self._url}/process.Process/SendSignal"
                self._owner.call("killing a command", lambda: self._owner.http.post(url, json=signal, headers=headers))
            return ExecResult(-9, output, timed_out=True, output_truncated=state["truncated"], duration=duration)
        code = int(end.get("exitCode", 0))  # proto3 JSON leaves a 0 out
        if not end.get("exited", True) and code == 0:
            code = 137 if "kill" in str(end.get("status", "")) else -1
        return ExecResult(code, output, output_truncated=state["truncated"], duration=duration)

    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        if not files:
            return
        parts = [("file", (f"{dest.rstrip('/')}/{path}", bytes(data))) for path, data in files.items()]
        params = {"username": user or self.user}
        url = f"{self._url}/files"
        headers = self._headers(user)
        self._owner.call(
            f"uploading into {dest}", lambda: self._owner.http.post(url, files=parts, params=params, headers=headers)
        )
        scripts = [f"{dest.rstrip('/')}/{path}" for path, data in files.items() if data.startswith(b"#!")]
        if scripts:
            self.exec(["chmod", "+x", *scripts], timeout=30, user=user)

    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        """Regular files reached without a link (``Filesystem/Stat`` of each folder on the way, of
        the entry itself), read through ``GET /files``."""
        found: dict[str, bytes] = {}
        for path in paths:
            parts = [part for part in posixpath.normpath(path).split("/") if part]
            if not path.startswith("/") or not parts:
                continue
            entries = [self._stat("/" + "/".join(parts[:depth])) for depth in range(1, len(parts) + 1)]
            if any(entry is None or entry.get("isSymlink") or entry.get("symlinkTarget") for entry in entries):
                continue
            last = entries[-1] or {}
            if last.get("type") != "FILE_TYPE_FILE" or int(last.get("size") or 0) > max_bytes:
                continue
            response = self._owner.http.get(
                f"{self._url}/files", params={"path": path, "username": "root"}, headers=self._headers("root")
            )
            if response.status_code == 200 and len(response.content) <= max_bytes:
                found[path] = response.content
        return found

    def _stat(self, path: str) -> dict[str, Any] | None:
        headers = {**self._headers("root"), "Content-Type": "application/json", "Connect-Protocol-Version": "1"}
        response = self._owner.http.post(
            f"{self._url}/filesystem.Filesystem/Stat", json={"path": path}, headers=headers
        )
        if response.status_code != 200:
            return None
        entry = response.json().get("entry")
        return entry if isinstance(entry, dict) else None

    def destroy(self) -> None:
        if self._destroyed or not self.id:
            return
        self._destroyed = True
        try:
            with self.stages.measure("destroy"):
                response = self._owner._api("DELETE", f"/sandboxes/{self.id}")()
                if response.status_code not in (200, 204, 404):
                    self._owner.call("deleting a sandbox", self._owner._api("DELETE", f"/sandboxes/{self.id}"))
        except self._owner.httpx.TransportError:
            self._owner.call("deleting a sandbox", self._owner._api("DELETE", f"/sandboxes/{self.id}"))
        finally:
            self._owner.slots.release()
