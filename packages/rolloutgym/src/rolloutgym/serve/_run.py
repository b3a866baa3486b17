"""Running the server: uvicorn with the limits and shutdown behaviour ``rolloutgym serve`` promises."""

from __future__ import annotations

import gc
import ipaddress
import logging
import socket
import sys
from typing import Any

from rolloutgym_protocol.display import json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import ConfigError

from ._ws_protocol import websocket_protocol
from .app import ServeConfig, create_app

__all__ = ["JsonLogFormatter", "is_loopback", "serve"]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonLogFormatter(logging.Formatter):
    """One JSON object per log line: time, level, logger, message and the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": _message(record),
        }
        entry.update({key: value for key, value in vars(record).items() if key not in _STANDARD})
        if record.exc_info and record.levelno >= logging.ERROR:
            entry["exception"] = self.formatException(record.exc_info)
        # Any value (an int too long to print, an object) as text: a log line is never lost to its values.
        return json_text(entry, ensure_ascii=True)


def _message(record: logging.LogRecord) -> str:
    """``record.getMessage()``; the template and its arguments as text when formatting them fails."""
    try:
        return record.getMessage()
    except Exception:
        return f"{safe_str(record.msg)} {safe_repr(record.args)}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
        except OSError:
            return False


def serve(
    config: ServeConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    registry: Any = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM closes every session, then exits).

    Raises ``ConfigError`` when binding beyond loopback without a token.
    """
    import uvicorn

    if not is_loopback(host) and not config.token:
        raise ConfigError(
            f"--host {host} accepts connections from other machines: set a bearer token with --token "
            "or ROLLOUTGYM_SERVE_TOKEN (clients send it as 'Authorization: Bearer TOKEN')"
        )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logger = logging.getLogger("rolloutgym.serve")
    logger.handlers[:] = [handler]
    logger.setLevel(log_level.upper())
    logger.propagate = False
    app = create_app(config, registry=registry)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            ws_max_size=config.max_body_bytes,
            ws=websocket_protocol(),  # uvicorn's sans-I/O protocol, reading paused only when requests queue
            ws_per_message_deflate=False,
            h11_max_incomplete_event_size=64 * 1024,
            timeout_graceful_shutdown=10,
            lifespan="on",
        )
    )
    _tune_garbage_collector()
    server.run(sockets=[sock] if sock is not None else None)


# Collect the youngest generation every 10,000 net allocations instead of every 700 (CPython's default).
GC_YOUNG_THRESHOLD = 10_000


def _tune_garbage_collector() -> None:
    """Garbage collection for a process that does nothing but serve (``rolloutgym serve`` only, not ``create_app``).

    With a thousand sessions stepping, every message allocates dicts and lists, and the
    collector's older generations walk every live object: measured, a third of the
    server's CPU went to collection (most of it full collections walking the ~70,000
    objects of the loaded modules, registry and envs). Those startup objects are frozen
    (``gc.freeze``: never walked, never freed, as they live until exit anyway) and the
    youngest generation is collected less often; reference cycles are still collected.
    """
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), middle, old)
