"""The errors of remote envs, and how exceptions map to HTTP statuses and back.

::

    RolloutGymError
     └── RemoteEnvError (RuntimeError)      the server cannot be reached or answered nonsense
          ├── ServerBusy                    429: the server's session limit is reached
          ├── Unauthorized (PermissionError)  401/403: missing or wrong bearer token
          ├── SessionNotFound (LookupError)   404: unknown, closed or reaped session
          ├── RequestTooLarge (ValueError)    413: body over the server's limit
          └── Withheld                      an env's error whose message a server hiding task data withholds

Errors the env or the registry raise on the server (``EnvNotFound``, ``TaskNotFound``,
``InvalidAction``, ``ValueError`` …) travel as ``{"error": {"type", "message"}}`` and are
raised again on the client as the same class with the same message.
"""

from __future__ import annotations

import builtins
from typing import Any

from pydantic import ValidationError
from rolloutgym_protocol import errors as protocol_errors
from rolloutgym_protocol.errors import RolloutGymError

__all__ = [
    "RemoteEnvError",
    "RequestTooLarge",
    "ServerBusy",
    "SessionNotFound",
    "Unauthorized",
    "Withheld",
    "error_body",
    "error_from_body",
    "status_for",
]


class RemoteEnvError(RolloutGymError, RuntimeError):
    """A served env could not be reached, or the server failed (its message says which)."""


class ServerBusy(RemoteEnvError):
    """The server holds its maximum number of sessions (HTTP 429); retry later or raise ``--max-sessions``."""


class Unauthorized(RemoteEnvError, PermissionError):
    """The server needs a bearer token (``ROLLOUTGYM_SERVE_TOKEN`` / ``token=``) and got none or a wrong one."""


class SessionNotFound(RemoteEnvError, LookupError):
    """No such session: it was never opened, was closed, or was reaped after idling."""


class RequestTooLarge(RemoteEnvError, ValueError):
    """The request body is over the server's ``--max-body-bytes``."""


class Withheld(RemoteEnvError):
    """An error raised inside a served env, its message withheld (the server hides task data).

    It answers with the original's HTTP status and type name; the client raises the
    original type with this message. The original is chained (``__cause__``) for the log.
    """

    def __init__(self, original: BaseException) -> None:
        self.original_type = type(original).__name__
        self.status = status_for(original)
        super().__init__(
            f"the env raised {self.original_type}; its message is withheld because this server hides task "
            "data (--hide-task-items); the server's log has it"
        )
        self.__cause__ = original


_OURS: dict[str, type[BaseException]] = {
    cls.__name__: cls for cls in (RemoteEnvError, ServerBusy, Unauthorized, SessionNotFound, RequestTooLarge)
}


def status_for(exc: BaseException) -> int:
    """The HTTP status for an exception raised while serving a request."""
    if isinstance(exc, Withheld):
        return exc.status
    if isinstance(exc, ServerBusy):
        return 429
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, RequestTooLarge):
        return 413
    if isinstance(exc, (SessionNotFound, protocol_errors.NotFoundError)):
        return 404
    if isinstance(exc, PermissionError):
        return 403
    if isinstance(exc, (ValueError, TypeError, LookupError, ValidationError)):
        return 400
    if isinstance(exc, RuntimeError) and not isinstance(exc, RemoteEnvError):
        return 409  # the env refuses the call in its state (closed, step before reset)
    return 500


def error_body(exc: BaseException) -> dict[str, Any]:
    """``{"error": {"type", "message"}}`` (never a traceback)."""
    name = exc.original_type if isinstance(exc, Withheld) else type(exc).__name__
    try:
        message = str(exc) if not isinstance(exc, KeyError) else str(exc.args[0] if exc.args else "")
    except Exception:  # noqa: BLE001 - an exception whose message cannot be printed (a huge int in it)
        message = f"<{name} whose message cannot be printed>"
    return {"error": {"type": name, "message": message}}


def error_from_body(body: Any, status: int) -> BaseException:
    """Rebuild the exception a server reported: the same class where it is known here."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return RemoteEnvError(f"the server answered HTTP {status} without an error description: {str(body)[:300]}")
    name = str(error.get("type") or "")
    message = str(error.get("message") or "")
    cls = _OURS.get(name) or getattr(protocol_errors, name, None) or getattr(builtins, name, None)
    if status == 429:
        cls = ServerBusy
    elif status == 401 and not (isinstance(cls, type) and issubclass(cls, Unauthorized)):
        cls = Unauthorized
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, (SystemExit, KeyboardInterrupt)):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - an exception class with a different constructor
            pass
    return RemoteEnvError(f"{name}: {message}" if name else message)
