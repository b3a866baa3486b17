"""A small Docker Engine API client: httpx on the engine's unix socket (or TCP).

Why not the ``docker`` SDK: the dozen calls a sandbox needs (ping, build, create, start, exec,
archive in/out, commit, list, remove) are plain HTTP; httpx is already the project's HTTP
client (the ``http``/``serve`` extras) and speaks to a unix socket by itself, and a deadline on
an exec's output stream is one read timeout here, where the SDK's ``exec_run`` has none.
Podman's ``podman system service`` answers the same API (the compat endpoints).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

from ._contract import SandboxInfraError

__all__ = ["EngineClient", "default_host", "demultiplex", "tar_of"]

API = "v1.41"


def default_host() -> str:
    """``DOCKER_HOST``, else podman's root socket where it exists, else Docker's."""
    if os.environ.get("DOCKER_HOST"):
        return os.environ["DOCKER_HOST"]
    for socket in ("/run/podman/podman.sock", "/var/run/docker.sock"):
        if os.path.exists(socket):
            return f"unix://{socket}"
    return "unix:///var/run/docker.sock"


class EngineClient:
    """Calls on one engine endpoint (``unix:///path.sock`` or ``tcp://host:port``)."""

    def __init__(self, host: str | None = None, *, timeout: float = 120.0) -> None:
        try:
            import httpx
        except ImportError:
            from ..install_hints import pip_install

            hint = pip_install("rolloutgym", "docker")
            raise SandboxInfraError(f"the docker sandbox provider needs httpx: {hint}") from None

        self.host = host or default_host()
        if self.host.startswith("unix://"):
            transport = httpx.HTTPTransport(uds=self.host[len("unix://") :])
            base = f"http://engine/{API}"
        elif self.host.startswith(("tcp://", "http://")):
            transport = httpx.HTTPTransport()
            base = "http://" + self.host.split("://", 1)[1].rstrip("/") + f"/{API}"
        else:
            raise SandboxInfraError(f"engine endpoint {self.host!r}: use unix:///path/to.sock or tcp://host:port")
        self._http = httpx.Client(transport=transport, base_url=base, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def fix_hint(self) -> str:
        return (
            f"the container engine at {self.host} does not answer: start it (podman: `podman system service "
            f"--time=0 {self.host}`; Docker: `systemctl start docker`) or point DOCKER_HOST / "
            "--sandbox-option host=... at a running one"
        )

    # -- requests -----------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        ok: tuple[int, ...] = (200, 201, 204),
        headers_only: bool = False,
        **kwargs: Any,
    ) -> Any:
        """One call; a JSON answer is decoded. Engine down or an unexpected status: :class:`SandboxInfraError`."""
        import httpx

        try:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.RemoteProtocolError:
                # a kept-alive connection the engine closed as we wrote on it (seen under load with many
                # threads): the request never reached it; once more on a fresh connection
                response = self._http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.RemoteProtocolError, FileNotFoundError, ConnectionError) as exc:
            raise SandboxInfraError(self.fix_hint() + f" ({type(exc).__name__})") from None
        except httpx.TimeoutException:
            raise SandboxInfraError(
                f"the container engine at {self.host} did not answer {method} {path} in time"
            ) from None
        if response.status_code not in ok:
            raise EngineError(response.status_code, _message(response), f"{method} {path}")
        if headers_only:
            return response.headers
        if response.headers.get("content-type", "").startswith("application/json") and response.content:
            return response.json()
        return response.content

    def stream(self, method: str, path: str, *, read_timeout: float | None = None, **kwargs: Any) -> Any:
        """A streamed response (a context manager); the read timeout bounds every wait for bytes."""
        import httpx

        timeout = httpx.Timeout(self._http.timeout.connect, read=read_timeout, write=None, pool=None)
        return self._http.stream(method, path, timeout=timeout, **kwargs)

    def ping(self) -> None:
        problem = self.unreachable()
        if problem:
            raise SandboxInfraError(f"{self.fix_hint()} ({problem})")
        self.request("GET", "/_ping")

    def unreachable(self) -> str | None:
        """Why the engine's unix socket refuses a connection (None: it accepts one, or the host is TCP).
        Connected by hand: httpcore 1.0 leaks the socket of a failed connection."""
        if not self.host.startswith("unix://"):
            return None
        import socket

        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(10)
            try:
                probe.connect(self.host[len("unix://") :])
            except OSError as exc:
                return exc.strerror or type(exc).__name__
        return None

    def image_exists(self, reference: str) -> bool:
        return self.image_id(reference) is not None

    def image_id(self, reference: str) -> str | None:
        """The image's id, or None when the engine has no such image."""
        try:
            found = self.request("GET", f"/images/{quote(reference, safe='')}/json")
        except EngineError as exc:
            if exc.status == 404:
                return None
            raise
        return str(found.get("Id", "")) if isinstance(found, dict) else ""

    def list_containers(self, label: str) -> list[dict[str, Any]]:
        filters = json.dumps({"label": [label]})
        found: list[dict[str, Any]] = self.request("GET", "/containers/json", params={"all": "1", "filters": filters})
        return found

    def list_images(self, label: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.request(
            "GET", "/images/json", params={"filters": json.dumps({"label": [label]})}
        )
        return found

    def remove_container(self, container: str) -> None:
        try:
            self.request("DELETE", f"/containers/{container}", params={"force": "1", "v": "1"})
        except EngineError as exc:
            if exc.status not in (404, 409):
                raise

    def remove_container_behind(self, container: str) -> None:
        """Remove a container from a background thread. On a unix socket the request goes out on a
        connection of its own, closed whatever happens: the engine may be going away meanwhile (a
        test's service stopping), and httpcore 1.0 leaves the socket of a failed connection open."""
        if not self.host.startswith("unix://"):
            self.remove_container(container)
            return
        import socket

        request = f"DELETE /{API}/containers/{quote(container, safe='')}?force=1&v=1 HTTP/1.0\r\nHost: engine\r\n\r\n"
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(self._http.timeout.read or 120.0)
            try:
                conn.connect(self.host[len("unix://") :])
                conn.sendall(request.encode())
                while conn.recv(65536):
                    pass
            except OSError:
                pass  # the engine is gone: the reaper removes the container when one starts

    def remove_image(self, image: str, *, force: bool = True) -> bool:
        """Remove ``image``; False when it was gone or is in use (409: a container uses it, without ``force``)."""
        try:
            self.request("DELETE", f"/images/{quote(image, safe='')}", params={"force": "1" if force else "0"})
        except EngineError as exc:
            if exc.status not in (404, 409):
                raise
            return False
        return True

    def wait_gone(self, container: str, seconds: float = 10.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.request("GET", f"/containers/{container}/json")
            except EngineError:
                return
            time.sleep(0.05)


class EngineError(SandboxInfraError):
    """The engine answered a call with an error status."""

    def __init__(self, status: int, message: str, call: str) -> None:
        super().__init__(f"the container engine refused {call} ({status}): {message}")
        self.status = status
        self.engine_message = message


def _message(response: Any) -> str:
    try:
        return str(response.json().get("message", "")).strip()[:500]
    except ValueError:
        return response.text.strip()[:500]


def demultiplex(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The payloads of a non-TTY attach stream (8-byte frames: stream, 0, 0, 0, big-endian size)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= 8:
            size = int.from_bytes(buffer[4:8], "big")
            if len(buffer) < 8 + size:
                break
            yield buffer[8 : 8 + size]
            buffer = buffer[8 + size :]
    if buffer[8:]:
        yield buffer[8:]


def tar_of(
    files: Mapping[str, bytes], *, prefix: str = "", uid: int = 0, gid: int = 0, dirs: tuple[str, ...] = ()
) -> bytes:
    """A tar of ``files`` under ``prefix`` (``prefix`` and the folders below it made, owned by ``uid``:``gid``;
    the folders above ``prefix`` are left as they are: they must exist)."""
    buffer = io.BytesIO()
    top = os.path.dirname(prefix.strip("/"))
    made: set[str] = {top} if top else set()
    with tarfile.open(fileobj=buffer, mode="w") as archive:

        def folder(name: str) -> None:
            if not name or name in made:
                return
            folder(os.path.dirname(name))
            made.add(name)
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, 0o755, uid, gid, time.time()
            archive.addfile(info)

        for name in dirs:
            folder(name.strip("/"))
        for path, data in files.items():
            name = f"{prefix.strip('/')}/{path}".strip("/")
            folder(os.path.dirname(name))
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid, info.mtime = len(data), 0o644, uid, gid, time.time()
            if data.startswith(b"#!"):
                info.mode = 0o755
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
