"""Deadlines for blocking calls that may never return (Tinker client creation without network).

The call runs in a daemon thread; the caller waits at most ``seconds`` and then gets a
:class:`PolicyError`. The thread cannot be killed, but being a daemon it never keeps the
process alive. :func:`unreachable` probes the service's TCP port first, in a daemon thread
too, so that an offline machine fails fast without starting the SDK's own threads (whose
pending DNS lookups would otherwise delay interpreter exit).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar
from urllib.parse import urlparse

from rolloutgym_protocol.errors import PolicyError

__all__ = ["run_with_deadline", "unreachable"]

T = TypeVar("T")


def _in_daemon_thread(function: Callable[[], T], name: str) -> Future[T]:
    future: Future[T] = Future()

    def run() -> None:
        try:
            result = function()
        except BaseException as exc:  # handed to the waiting caller
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def run_with_deadline(function: Callable[[], T], *, seconds: float, what: str, hint: str) -> T:
    """Return ``function()``, or raise :class:`PolicyError` when it takes more than ``seconds``.

    Args:
        function: the blocking call.
        seconds: the deadline.
        what: what is being done, for the message ("creating a Tinker sampling client for X").
        hint: what the user should check or change.

    Raises:
        PolicyError: the deadline passed. Exceptions of ``function`` propagate unchanged.
    """
    future = _in_daemon_thread(function, f"rolloutgym-deadline: {what}"[:60])
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        raise PolicyError(f"{what} did not finish within {seconds:g} s. {hint}") from None


def unreachable(url: str, seconds: float) -> str | None:
    """Why ``url``'s host and port cannot be reached within ``seconds``, or None when they can."""
    parsed = urlparse(url)
    host = parsed.hostname
    if not host:
        return f"{url!r} is not a URL"
    port = parsed.port or (443 if parsed.scheme == "https" else 80)

    def connect() -> None:
        with socket.create_connection((host, port), timeout=seconds):
            pass

    future = _in_daemon_thread(connect, f"rolloutgym-probe {host}:{port}")
    try:
        future.result(timeout=seconds)
    except FutureTimeout:
        return f"no TCP connection to {host}:{port} within {seconds:g} s"
    except OSError as exc:
        return f"cannot connect to {host}:{port} ({exc.strerror or exc})"
    return None
