"""Serve one report file on the loopback interface (``rolloutgym view``).

Only the report is served (at ``/``), nothing else from the disk, and only on 127.0.0.1
unless asked otherwise.
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["ReportServer"]

_CHUNK = 1 << 20


def _handler_for(path: Path) -> type[BaseHTTPRequestHandler]:
    class ReportHandler(BaseHTTPRequestHandler):
        server_version = "rolloutgym-view"

        def do_GET(self) -> None:  # noqa: N802 (the http.server API)
            self._respond(send_body=True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._respond(send_body=False)

        def _respond(self, *, send_body: bool) -> None:
            if self.path.split("?", 1)[0] not in ("/", "/index.html", f"/{path.name}"):
                self.send_error(HTTPStatus.NOT_FOUND, "only the report is served here: open /")
                return
            size = path.stat().st_size
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(size))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if send_body:
                with path.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        self.wfile.write(chunk)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # keep the terminal for the URL and errors

    return ReportHandler


class ReportServer:
    """An HTTP server for one report file.

    Args:
        path: the HTML report.
        host: the interface to listen on (default loopback only).
        port: the port; 0 picks a free one (see :attr:`url`).

    Example:
        >>> server = ReportServer("run.html")        # doctest: +SKIP
        >>> server.start(); print(server.url); server.stop()
    """

    def __init__(self, path: str | Path, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.path = Path(path)
        self._server = ThreadingHTTPServer((host, port), _handler_for(self.path))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        host_text = f"[{host}]" if ":" in host else host
        return f"http://{host_text}:{port}/"

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="rolloutgym-view", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self._server.serve_forever()

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
