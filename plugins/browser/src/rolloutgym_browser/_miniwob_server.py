"""A static file server for the ``miniwob`` package's ``html`` folder, on 127.0.0.1.

Why not ``file://``: the pooled contexts come warmed up on a 127.0.0.1 page, and a page of
the same site (ports do not count) reuses that renderer, while a ``file://`` page needs a
new renderer process on every episode. The server runs on the browser service loop (no
threads), answers ``GET``/``HEAD`` for files under the folder only (no listing, nothing
outside it: paths are resolved and checked), and closes each connection after one answer.
"""

from __future__ import annotations

import asyncio
import importlib.util
import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rolloutgym_protocol.errors import ConfigError

from ._listener import LoopbackListener

__all__ = ["MINIWOB_INSTALL_HINT", "StaticServer", "miniwob_html_root"]

# No square brackets: the CLI prints some errors through rich markup, which would take
# "rolloutgym-browser[miniwob]" for a style tag and drop it. These packages are the extra.
MINIWOB_INSTALL_HINT = "install the miniwob extra of rolloutgym-browser: pip install miniwob==1.1.0 playwright"

_MAX_REQUEST_BYTES = 16_384


class StaticServer:
    """Serves ``root`` at ``http://127.0.0.1:<port>/``; :meth:`start` and :meth:`close` on one loop."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._listener: LoopbackListener | None = None
        self.origin = ""

    async def start(self) -> None:
        listener = LoopbackListener(self._serve)
        await listener.start()
        self._listener = listener
        self.origin = f"http://127.0.0.1:{listener.port}"

    def _file(self, target: str) -> Path | None:
        path = unquote(urlsplit(target).path)
        candidate = (self.root / path.lstrip("/")).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        return candidate

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > _MAX_REQUEST_BYTES:
                raise ValueError("request too large")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            found = self._file(target) if method in ("GET", "HEAD") else None
            if found is None:
                status, body, kind = (
                    ("404 Not Found" if method in ("GET", "HEAD") else "405 Method Not Allowed"),
                    b"",
                    "text/plain",
                )
            else:
                status, body = "200 OK", found.read_bytes()
                kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            header = (
                f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
                "Cache-Control: max-age=3600\r\nConnection: close\r\n\r\n"
            ).encode("latin-1")
            writer.write(header + (body if method == "GET" else b""))
            await writer.drain()
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # the listener closes the connection

    async def close(self) -> None:
        """Stop listening and end open connections (safe to call twice)."""
        if self._listener is not None:
            await self._listener.close()


def miniwob_html_root() -> Path:
    """The ``html`` folder of the installed ``miniwob`` package (found without importing it).

    Raises:
        ConfigError: the package is missing (naming the extra to install) or has no pages.
    """
    spec = importlib.util.find_spec("miniwob")
    if spec is None or spec.origin is None:
        raise ConfigError(
            f"browser/miniwob-v0 needs the MiniWoB++ task pages of the 'miniwob' package; {MINIWOB_INSTALL_HINT} "
            "(and Chromium: apt-get install chromium)"
        )
    root = Path(spec.origin).parent / "html"
    if not (root / "miniwob").is_dir() or not (root / "core" / "core.js").is_file():
        raise ConfigError(
            f"the installed 'miniwob' package at {root.parent} has no task pages (miniwob/html/miniwob/*.html); "
            f"reinstall it; {MINIWOB_INSTALL_HINT}"
        )
    return root
