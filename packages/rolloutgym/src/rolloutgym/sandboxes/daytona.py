"""The ``daytona`` provider: sandboxes on Daytona's service, past one machine.

Through Daytona's official API clients (``daytona-api-client`` for the control plane:
create, get, delete; ``daytona-toolbox-api-client`` for what runs in a sandbox: execute,
upload, download), the core's extra ``daytona``. Credentials: ``api_key=`` or
``DAYTONA_API_KEY``; endpoint: ``api_url=`` or ``DAYTONA_API_URL`` (Daytona's cloud by default).

What it adds for fleets: at most ``max_concurrent`` sandboxes alive at once (``create`` waits
for a slot), retries with exponential backoff on a connection error or a 5xx answer, and a
quota or rate answer (HTTP 403/429 naming a quota or limit) raised at once as
:class:`SandboxInfraError` (an infrastructure failure, never a reward of 0). Images are
Daytona snapshots (``image=`` names one); builds from a Dockerfile are not offered here.

Tested against Daytona's documented wire format (the OpenAPI models the official clients are
generated from) with a local stand-in server on 127.0.0.1 (``rolloutgym_testing.daytona_standin``):
there is no network in the project's test machines and no Daytona account.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from ._contract import LABEL, ExecResult, ResourceLimits, RunningSandbox, SandboxInfraError, SandboxProvider
from ._owner import owner_label

__all__ = ["DaytonaProvider", "DaytonaSandbox"]

T = TypeVar("T")
DEFAULT_URL = "https://app.daytona.io/api"
_QUOTA_WORDS = ("quota", "limit", "exceed", "insufficient", "too many")


def _clients() -> tuple[Any, Any]:
    try:
        import daytona_api_client
        import daytona_toolbox_api_client
    except ImportError:
        from ..install_hints import pip_install

        hint = pip_install("rolloutgym", "daytona")
        raise SandboxInfraError(f"the daytona sandbox provider needs Daytona's API clients: {hint}") from None
    return daytona_api_client, daytona_toolbox_api_client


class DaytonaProvider(SandboxProvider):
    """Sandboxes on Daytona.

    Args:
        api_key: the API key (default ``DAYTONA_API_KEY``).
        api_url: the API's base URL (default ``DAYTONA_API_URL``, else Daytona's cloud).
        max_concurrent: sandboxes alive at once; ``create`` waits for a slot.
        retries: attempts after the first on a connection error or a 5xx answer.
        backoff: seconds before the first retry (doubled each time).
    """

    name = "daytona"
    capabilities = frozenset({"image", "network"})

    def __init__(
        self,
        api_key: str | None = None,
        *,
        api_url: str | None = None,
        max_concurrent: int = 16,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        self.api, self.toolbox = _clients()
        self.api_key = api_key or os.environ.get("DAYTONA_API_KEY", "")
        self.api_url = (api_url or os.environ.get("DAYTONA_API_URL") or DEFAULT_URL).rstrip("/")
        self.retries, self.backoff = max(0, int(retries)), float(backoff)
        self.slots = threading.BoundedSemaphore(max(1, int(max_concurrent)))
        self.owner = owner_label()
        configuration = self.api.Configuration(host=self.api_url, access_token=self.api_key)
        self._client = self.api.ApiClient(configuration)
        self.sandboxes = self.api.SandboxApi(self._client)

    def check(self) -> None:
        if not self.api_key:
            raise SandboxInfraError("the daytona provider needs an API key: set DAYTONA_API_KEY or pass api_key=...")

    def call(self, what: str, function: Callable[[], T]) -> T:
        """``function()`` with retries on transient failures; every failure as one line."""
        delay = self.backoff
        for attempt in range(self.retries + 1):
            try:
                return function()
            except Exception as exc:  # noqa: BLE001 - the clients raise their own ApiException and urllib3's errors
                status = getattr(exc, "status", None)
                text = str(getattr(exc, "body", None) or exc).replace("\n", " ")[:300]
                if status in (403, 429) and any(word in text.lower() for word in _QUOTA_WORDS):
                    raise SandboxInfraError(f"Daytona refused {what}: quota or rate limit ({status}): {text}") from None
                transient = status is None or status >= 500 or status == 429
                if not transient or attempt == self.retries:
                    raise SandboxInfraError(
                        f"Daytona: {what} failed ({status or type(exc).__name__}): {text}"
                    ) from None
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

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
    ) -> DaytonaSandbox:
        if build is not None:
            raise SandboxInfraError("the daytona provider runs snapshots (image=...); it does not build Dockerfiles")
        self.check()
        limits = limits or ResourceLimits()
        request = self.api.CreateSandbox(
            snapshot=image,
            user=user,
            env=dict(env or {}),
            labels={**(labels or {}), LABEL: "sandbox", f"{LABEL}.owner": self.owner},
            network_block_all=not network,
            cpu=max(1, round(limits.cpus)),
            memory=max(1, -(-limits.memory_bytes // (1 << 30))),
            disk=max(1, -(-(limits.disk_bytes or 1 << 30) // (1 << 30))),
            auto_delete_interval=0,
        )
        self.slots.acquire()
        sandbox = DaytonaSandbox(self, workdir or "/")
        try:
            with sandbox.stages.measure("create"):
                made = self.call("creating a sandbox", lambda: self.sandboxes.create_sandbox(request))
            sandbox.attach(made)
        except BaseException:
            self.slots.release()
            raise
        return sandbox


class DaytonaSandbox(RunningSandbox):
    """One Daytona sandbox (made by :meth:`DaytonaProvider.create`)."""

    provider = "daytona"

    def __init__(self, owner: DaytonaProvider, workdir: str) -> None:
        super().__init__()
        self._owner = owner
        self.workdir = workdir
        self._destroyed = False
        self._files: Any = None
        self._process: Any = None

    def attach(self, made: Any) -> None:
        self.id, self.image = made.id, made.snapshot or ""
        toolbox = self._owner.toolbox
        configuration = toolbox.Configuration(host=f"{made.toolbox_proxy_url.rstrip('/')}/{made.id}")
        client = toolbox.ApiClient(configuration)
        client.default_headers["Authorization"] = f"Bearer {self._owner.api_key}"
        self._process = toolbox.ProcessApi(client)
        self._files = toolbox.FileSystemApi(client)

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
        text = command if isinstance(command, str) else shlex.join(command)
        if stdin is not None:
            name = f"/tmp/.rolloutgym-stdin-{time.monotonic_ns()}"
            self.write_files({os.path.basename(name): stdin}, "/tmp")
            text = f"{text} < {name}"
        seconds = max(1, int(-(-timeout // 1)))
        request = self._owner.toolbox.ExecuteRequest(
            command=f"/bin/sh -c {shlex.quote(text)}",
            cwd=workdir or self.workdir,
            envs=dict(env or {}),
            timeout=seconds,
        )
        started = time.monotonic()
        stage = self.stages.measure("first_exec") if "first_exec" not in self.stages else _no_stage()
        with stage:
            answer = self._owner.call("running a command", lambda: self._process.execute_command(request))
        duration = time.monotonic() - started
        output = (answer.result or "")[:max_output_bytes]
        code = answer.exit_code if answer.exit_code is not None else -1
        timed_out = code in (-1, 124, 137) and duration >= seconds * 0.98
        truncated = len(answer.result or "") > max_output_bytes
        return ExecResult(code, output, timed_out=timed_out, output_truncated=truncated, duration=duration)

    def write_files(self, files: Mapping[str, bytes], dest: str, *, user: str | None = None) -> None:
        for path, data in files.items():
            target = f"{dest.rstrip('/')}/{path}"
            self._owner.call(f"uploading {target}", partial(self._files.upload_file, path=target, file=bytes(data)))

    def read_files(self, paths: Sequence[str], *, max_bytes: int = 16 << 20) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for path in paths:
            info = self._try(partial(self._files.get_file_info, path=path))
            if info is None or info.is_dir or info.mode.startswith("L") or (info.size or 0) > max_bytes:
                continue
            data = self._try(partial(self._files.download_file, path=path))
            if isinstance(data, (bytes, bytearray)):
                found[path] = bytes(data)
        return found

    def _try(self, function: Callable[[], T]) -> T | None:
        try:
            return function()
        except Exception:  # noqa: BLE001 - a missing file answers 404
            return None

    def destroy(self) -> None:
        if self._destroyed or not self.id:
            return
        self._destroyed = True
        try:
            with self.stages.measure("destroy"):
                self._owner.call("deleting a sandbox", lambda: self._owner.sandboxes.delete_sandbox(self.id))
        finally:
            self._owner.slots.release()


class _no_stage:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
