"""What both clients of a served session hold: its description, and how they read its answers.

The session's spaces, tools, metadata and ids come from its description (``POST /sessions`` or
the WebSocket ``open``); reset/step answers are decoded against those spaces and may change
them; the next oracle action can come along with an answer (prefetch).
"""

from __future__ import annotations

from typing import Any

from ._codec import decode_info, decode_space, value_decoder

_NOTHING = object()  # no prefetched oracle action


class _Described:
    """Attributes both clients take from the session's description."""

    _description: dict[str, Any]

    def _describe(self, description: dict[str, Any]) -> None:
        self._description = description
        self.session_id = description["session"]
        self.observation_space = decode_space(description["observation_space"])
        self.action_space = decode_space(description["action_space"])
        if description.get("tools") is not None:
            self.tools = description["tools"]
        metadata = dict(description.get("metadata") or {})
        metadata["nonblocking"] = False  # every call is network I/O
        self.metadata = metadata
        self.rolloutgym_env_id = description["env_id"]
        self.rolloutgym_task_id = description["task_id"]
        self.next_stop_strings: tuple[str, ...] = ()
        self._closed = False
        # Oracle prefetch: once a client asked for oracle_action(), reset/step answers bring
        # the next one along (the server computes it right after the step, where the next
        # oracle_action() call would); it stops when one goes unused.
        self._prefetch_oracle = False
        self._oracle_next: Any = _NOTHING

    def _prefetching(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._oracle_next is not _NOTHING:  # the last prefetched action went unused: stop asking
            self._prefetch_oracle = False
            self._oracle_next = _NOTHING
        if self._prefetch_oracle:
            body["prefetch"] = ["oracle_action"]
        return body

    def _prefetched(self) -> Any:
        """The prefetched oracle action (once), or ``_NOTHING``; a miss turns prefetching on."""
        value, self._oracle_next = self._oracle_next, _NOTHING
        if value is _NOTHING:
            self._prefetch_oracle = True
        return value

    def _finish(self, description: dict[str, Any]) -> None:
        self._describe(description)
        # Only the protocol methods the served env has (the oracle policy checks for them).
        if "oracle_action" in description["methods"]:
            self.oracle_action = self._oracle_action  # type: ignore[attr-defined]
        if "null_action" in description["methods"]:
            self.null_action = lambda: self._call("null_action")  # type: ignore[attr-defined]

    def _observe(self, result: dict[str, Any]) -> None:
        self.next_stop_strings = tuple(result.get("next_stop_strings") or ())
        if "oracle_action" in result:
            self._oracle_next = result["oracle_action"]
        # The served env's tools or spaces changed during the episode (they come only when they did).
        if "tools" in result:
            self.tools = result["tools"]
        if "action_space" in result:
            self.action_space = decode_space(result["action_space"])
        if "observation_space" in result:
            self.observation_space = decode_space(result["observation_space"])

    def _observation(self, value: Any) -> Any:
        """An observation from JSON to the observation space (``decode_value``, its checks made once per space)."""
        space = self.observation_space
        if space is not self.__dict__.get("_decoded_space", _NOTHING):  # the first, or the space changed
            self._decoded_space, self._decode_observation = space, value_decoder(space)
        return self._decode_observation(value)

    def _reset_result(self, result: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self._observe(result)
        return self._observation(result["observation"]), decode_info(result["info"], result.get("score_object", False))

    def _step_result(self, result: dict[str, Any]) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._observe(result)
        return (
            self._observation(result["observation"]),
            float(result["reward"]),
            bool(result["terminated"]),
            bool(result["truncated"]),
            decode_info(result["info"], result.get("score_object", False)),
        )

    def __str__(self) -> str:
        return self.__repr__()

    def __repr__(self) -> str:
        base_url = self.base_url  # type: ignore[attr-defined]
        return (
            f"<{type(self).__name__} {self.rolloutgym_env_id} task {self.rolloutgym_task_id} at {base_url} "
            f"session {self.session_id}>"
        )
