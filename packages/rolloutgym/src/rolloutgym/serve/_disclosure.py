"""What of a served env's answers may leave the server when task data is hidden.

``rolloutgym serve --hide-task-items`` (``ServeConfig(expose_task_items=False)``) is for a
server whose clients must not learn the tasks' ground truth (an evaluation served to the
party being evaluated). Hidden then means hidden on every way out, decided here for all
transports at once (HTTP, ``/ws``, the OpenEnv routes and what the MCP bridge relays):

* the task list has index, id and split only (no task items);
* ``oracle_action`` is not served: not listed in a session's ``methods``, refused by
  ``call`` (403) and never prefetched;
* ``info`` of reset and step keeps only the score's numbers (its value and its
  components' values, no feedback and no metadata, which name expected answers), and no
  other key;
* a session's env ``metadata`` keeps only the protocol keys (``render_modes``,
  ``render_fps``, ``nonblocking``);
* an error raised inside the env (its factory, reset, step, close or another method)
  keeps its type and HTTP status, but its message is withheld (the server's log has it).

Observations and tools are the env's answers to the policy and go out as they are.
"""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import Score

from ._errors import Withheld

__all__ = ["Disclosure"]

_PROTOCOL_METADATA = ("render_modes", "render_fps", "nonblocking")
HIDDEN_METHODS = frozenset({"oracle_action"})


def _numbers(score: Score) -> Score:
    return Score(score.value, {name: _numbers(child) for name, child in score.components.items()})


class Disclosure:
    """The server's rule for task data: ``hide=False`` sends everything, as a local run records it."""

    __slots__ = ("hide",)

    def __init__(self, hide: bool) -> None:
        self.hide = hide

    def methods(self, names: list[str]) -> list[str]:
        return [name for name in names if name not in HIDDEN_METHODS] if self.hide else names

    def may_call(self, method: str) -> None:
        if self.hide and method in HIDDEN_METHODS:
            raise PermissionError(
                f"this server hides task data (--hide-task-items): {method}() is not served; "
                "ask the server's operator for a server that exposes task items"
            )

    def metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        if not self.hide:
            return metadata
        return {key: metadata[key] for key in _PROTOCOL_METADATA if key in metadata}

    def info(self, info: Any) -> Any:
        """``info`` as it may leave the server (hidden: ``{"score": numbers only}`` or ``{}``)."""
        if not self.hide:
            return info
        try:
            score = Score.from_info(info) if isinstance(info, dict) else None
        except Exception:  # noqa: BLE001 - a malformed score is withheld with the rest
            score = None
        return {} if score is None else {"score": _numbers(score)}

    def env_error(self, exc: Exception) -> Exception:
        """The error to send for one the env raised (hidden: type and status, message withheld)."""
        return Withheld(exc) if self.hide and not isinstance(exc, Withheld) else exc
