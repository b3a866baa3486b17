"""``WorkflowEnv``: a compiled ``workflow``/``custom`` environment for one task (a ``gymnasium.Env``).

Chat-environment convention: the first observation is the system prompt and the task; each
action is an assistant message whose tool calls run in order, and the observation is one
``{"role": "tool", ...}`` message per call. A message without tool calls is the final
answer: the episode terminates and the verifier grades the final state and answer
(``info["score"]``). Unknown tools, malformed or invalid arguments come back as
``error: ...`` tool messages and count in ``info["invalid_actions"]``. After
``max_tool_calls`` calls further calls are refused; a message that still calls tools then
ends the episode (truncated, graded as it stands).

Conversational tasks (a task with a ``user`` section, see :mod:`rolloutgym_workflow.user`):
the first observation is the system prompt and the *user's* opening message, not the
instruction. A message without tool calls (or a ``respond_to_user`` tool call) goes to the
simulated user, whose answer comes back as a ``{"role": "user"}`` message; the episode ends
when the user ends the conversation, and the verifier grades the final state and everything
the agent told the user.

How one tool call is checked, run, recorded and answered is in ``_tool_calls.py``
(:class:`~rolloutgym_workflow._tool_calls.ToolCalls`, a base of ``WorkflowEnv``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gymnasium as gym
from rolloutgym.declarative import Task
from rolloutgym.verifiers import ToolCallRecord, VerifierContext
from rolloutgym_protocol import ForkableEnv, from_jsonable, spaces, to_jsonable
from rolloutgym_protocol.display import json_text, safe_str
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_protocol.toolcalls import normalize_tool_action

from ._arguments import parse_arguments
from ._derive import derive_reference_actions
from ._forking import restore_workflow, workflow_state
from ._tool_calls import ToolCalls
from .attribution import attribute_episode, user_evidence
from .user import RESPOND_TOOL, UserSection, make_user, parse_user_section

if TYPE_CHECKING:
    from .template import Program  # template.py builds envs from a Program: no runtime import back

__all__ = ["WorkflowEnv"]

Messages = list[dict[str, Any]]


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list (any other value as text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return "" if content is None else safe_str(content)


_log = logging.getLogger("rolloutgym.workflow")
_WARNED: set[tuple[str, Any]] = set()

_CONVERSATION_NOTE = (
    "\n\nYou are talking with a customer. Ask them for what you need to know; they answer your messages. "
    f"A message without tool calls (or a {RESPOND_TOOL} call) is sent to the customer. The conversation ends "
    "when the customer ends it."
)

_RESPOND_DEFINITION = {
    "type": "function",
    "function": {
        "name": RESPOND_TOOL,
        "description": "Send a message to the customer (the same as answering without a tool call).",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to tell the customer."}},
            "required": ["message"],
            "additionalProperties": False,
        },
    },
}


def _plain(call: Mapping[str, Any]) -> Mapping[str, Any]:
    function = call.get("function")
    return function if isinstance(function, Mapping) else call


def _is_respond(call: Any) -> bool:
    return isinstance(call, Mapping) and _plain(call).get("name") == RESPOND_TOOL


class WorkflowEnv(ForkableEnv, ToolCalls, gym.Env[Messages, dict[str, Any]]):
    """One task of a declarative ``workflow``/``custom`` environment.

    Args:
        program: the compiled environment (``template.compile_program``).
        task: the task to play.
        max_tool_calls: tool calls allowed per episode (default 20).
        judge: the policy ``llm_judge`` primitives ask: a policy object or ``"provider:model"``.
        user_policy: a policy that plays the simulated user of conversational tasks (a policy
            object or ``"provider:model"``); default: the task's scripted user.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        program: Program,
        task: Task | None,
        *,
        max_tool_calls: int | str = 20,
        judge: Any = None,
        user_policy: Any = None,
    ) -> None:
        if task is None:
            raise ConfigError(f"environment {program.slug!r} needs a task: make it with task=INDEX or a Task")
        try:
            max_tool_calls = int(max_tool_calls)
        except (TypeError, ValueError):
            raise ConfigError(f"max_tool_calls must be an integer, got {max_tool_calls!r}") from None
        if max_tool_calls < 1:
            raise ConfigError(f"max_tool_calls must be at least 1, got {max_tool_calls}")
        if isinstance(judge, str):
            from rolloutgym.registry import get_registry

            judge = get_registry().make_policy(judge)
        if judge is None and program.verifier.requires_judge:
            raise ConfigError(
                f"environment {program.slug!r}: its verifier has an llm_judge primitive, which needs a judge policy; "
                "pass --env-arg judge=PROVIDER:MODEL (e.g. judge=openai:gpt-4o-mini)"
            )
        self.program = program
        self.task = task
        self.max_tool_calls = max_tool_calls
        self.judge = judge
        self.user_section: UserSection | None = None
        task_user = getattr(task, "user", None)
        if task_user is not None:
            self.user_section = parse_user_section(task_user, goal=task.instruction, where=f"task {task.id!r}")
        if isinstance(user_policy, str) and self.user_section is not None:
            from rolloutgym.registry import get_registry

            user_policy = get_registry().make_policy(user_policy)
        self.user_policy = user_policy
        self.user: Any = None
        self._said: list[str] = []
        self._conversation: list[tuple[str, str]] = []  # (role, text) with the user: attribution's evidence
        self._env_faults: list[str] = []  # tool crashes on valid arguments (the env's fault)
        self._user_turns = 0
        self.tools = program.definitions if self.user_section is None else [*program.definitions, _RESPOND_DEFINITION]
        self.state: dict[str, Any] = program.fresh_state()
        self.records: list[ToolCallRecord] = []
        # Tools run elsewhere (an MCP server's) and the state they report: set by McpWorkflowEnv.
        self.extra_tools: dict[str, Any] = {}
        self.external_state: dict[str, Any] | None = None
        self._invalid = 0
        self._oracle_position = 0
        self._done = True
        self._closed = False

    # Spaces are built on first use: constructing them costs milliseconds (a pydantic
    # adapter each), more than a whole episode of dictionary work.
    @property
    def observation_space(self) -> Any:  # type: ignore[override]
        space = self.__dict__.get("_observation_space")
        if space is None:
            space = self.__dict__["_observation_space"] = spaces.messages.chat()
        return space

    @observation_space.setter
    def observation_space(self, space: Any) -> None:
        self.__dict__["_observation_space"] = space

    @property
    def action_space(self) -> Any:  # type: ignore[override]
        space = self.__dict__.get("_action_space")
        if space is None:
            space = self.__dict__["_action_space"] = spaces.messages.message(roles=("assistant",))
        return space

    @action_space.setter
    def action_space(self, space: Any) -> None:
        self.__dict__["_action_space"] = space

    # -- episode --------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Messages, dict[str, Any]]:
        super().reset(seed=seed)
        self.state = self.program.fresh_state()
        self.records = []
        self._invalid = 0
        self._oracle_position = 0
        self._done = False
        self._said = []
        self._env_faults = []
        self._user_turns = 0
        if self.user_section is not None:
            self.user = make_user(self.user_section, user_policy=self.user_policy)
            self._conversation = [("user", self.user.opening())]
            system = self.program.system_prompt + _CONVERSATION_NOTE
            messages = [{"role": "system", "content": system}, {"role": "user", "content": self.user.opening()}]
            return messages, {"task_id": self.task.id, "conversation": True}
        user = self.task.instruction
        if self.task.input is not None:
            user += "\n\nInput:\n" + json_text(self.task.input, indent=2)
        messages = [{"role": "system", "content": self.program.system_prompt}, {"role": "user", "content": user}]
        return messages, {"task_id": self.task.id}

    def step(self, action: Any) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        kind, value = self._begin(action)
        if kind != "calls":
            return self._conclude(kind, value)
        observations = []
        responses: list[str] = []
        for call in value:
            if self.user is not None and _is_respond(call):
                observation, message = self._respond(call)
                observations.append(observation)
                if message is not None:
                    responses.append(message)
            else:
                observations.append(self._call(call))
        return self._after_calls(observations, responses)

    # The steps of ``step``, shared with envs whose tool calls are awaited (``McpWorkflowEnv``).

    def _begin(self, action: Any) -> tuple[str, Any]:
        """What an action asks for: ``("calls", calls)``, or ``("answer"|"user"|"truncate"|"invalid", value)``."""
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        if isinstance(action, str):
            return ("user" if self.user is not None else "answer"), action
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        if type(action) is not dict and not isinstance(action, Mapping):
            self._invalid += 1
            message = (
                "error: send an assistant message {'role': 'assistant', 'content': ..., 'tool_calls'?: [...]}, "
                f"not {type(action).__name__}"
            )
            return "invalid", ([{"role": "user", "content": message}], 0.0, False, False, self._info())
        calls = action.get("tool_calls")
        if not calls:
            return ("user" if self.user is not None else "answer"), _text(action.get("content"))
        if not isinstance(calls, list):
            calls = [calls]
        if len(self.records) >= self.max_tool_calls:
            return "truncate", _text(action.get("content"))
        return "calls", calls

    def _conclude(self, kind: str, value: Any) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        """The step result of an action without tool calls to run (see :meth:`_begin`)."""
        if kind == "user":
            return self._to_user([], value)
        if kind == "answer":
            return self._finish(value, truncated=False)
        if kind == "truncate":
            return self._finish(value, truncated=True)
        return value

    def _after_calls(self, observations: Messages, responses: list[str]) -> tuple[Messages, float, bool, bool, dict]:
        """The step result once the calls ran: the tool messages, or the user's answer to what was sent."""
        if responses:
            return self._to_user(observations, "\n".join(responses))
        return observations, 0.0, False, False, self._info()

    def _respond(self, call: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        call_id = call.get("id") if type(call.get("id")) is str else f"call_{len(self.records)}"
        arguments, error = parse_arguments(_plain(call).get("arguments"))
        message = (arguments or {}).get("message") if error is None else None
        if not isinstance(message, str):
            self._invalid += 1
            return {
                "role": "tool",
                "tool_call_id": call_id,
                "content": f'error: {RESPOND_TOOL} takes {{"message": "..."}}',
            }, None
        return {"role": "tool", "tool_call_id": call_id, "content": "sent to the customer"}, message

    def _to_user(self, observations: Messages, text: str) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        """Deliver an agent message to the simulated user; the user's answer is the next observation."""
        if text.strip():
            self._said.append(text)
        self._user_turns += 1
        reply, ended = self.user.reply(text)
        self._conversation += [("assistant", text), ("user", reply)]
        if ended:
            return self._finish("\n".join(self._said), truncated=False, user_reply=reply)
        return [*observations, {"role": "user", "content": reply}], 0.0, False, False, self._info()

    def _info(self) -> dict[str, Any]:
        info = {"invalid_actions": self._invalid, "tool_calls": len(self.records)}
        if self.user is not None:
            info["user_turns"] = self._user_turns
        return info

    def _finish(
        self, answer: str, *, truncated: bool, user_reply: str | None = None
    ) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        self._done = True
        if self.user is not None and not user_reply:
            answer = "\n".join([*self._said, answer] if answer.strip() else self._said)
        context = VerifierContext(
            final_state=self.final_state(),
            final_output=answer,
            tool_calls=tuple(self.records),
            task=self.task,
            judge=self.judge,
        )
        score = self._attributed(self.program.verifier.score(context), user_ended=user_reply is not None)
        info = self._info()
        info["score"] = score.to_dict()
        info["passed"] = bool(score.metadata.get("passed"))
        state = self.state if self.external_state is None else {**self.state, **self.external_state}
        info["state"] = from_jsonable(to_jsonable(state))  # a JSON-like copy, every digit kept
        final: Messages = [] if user_reply is None else [{"role": "user", "content": user_reply}]
        if user_reply is not None:
            info["user_ended"] = True
        return final, score.value, not truncated, truncated, info

    def _attributed(self, score: Any, *, user_ended: bool) -> Any:
        """The verifier's score with who the evidence points at (:mod:`rolloutgym_workflow.attribution`)."""
        passed = bool(score.metadata.get("passed"))
        user = (None, None)
        if self.user_section is not None:
            turns = getattr(self.user, "turns", self._user_turns)
            user = user_evidence(self.user_section, self._conversation, user_ended=user_ended, user_turns=turns)
        return attribute_episode(score, passed, user=user, env_faults=self._env_faults)

    def final_state(self) -> dict[str, Any]:
        """What verifiers see: the fixtures overlaid with the mutable state (as the SDK does).

        An MCP server's reported state (``config.mcp.state_tool``) overlays both.
        """
        if self.external_state is not None:
            return {**self.program.fixtures, **self.state, **self.external_state}
        if not self.program.fixtures:
            return self.state
        return {**self.program.fixtures, **self.state}

    # -- reference solution ---------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """The next step of the task's reference solution, then its final answer.

        A task without ``reference_actions`` (an SDK env file gives only
        ``hidden_ground_truth``) is solved with calls derived from its expected state when
        the tools allow it (:func:`derive_reference_actions`); otherwise the oracle says
        once, as a warning, that the task has no reference solution.
        """
        actions = self.task.reference_actions or self._derived_actions()
        if self._oracle_position < len(actions):
            entry = actions[self._oracle_position]
            self._oracle_position += 1
            if "role" in entry:
                return dict(entry)
            call = {
                "id": f"call_{self._oracle_position - 1}",
                "name": entry["name"],
                "arguments": dict(entry.get("arguments", {})),
            }
            return {"role": "assistant", "content": "", "tool_calls": [call]}
        if self.user is not None:
            return {"role": "assistant", "content": self.task.reference_answer or "Is there anything else I can do?"}
        return {"role": "assistant", "content": self.task.reference_answer or "Done."}

    def _derived_actions(self) -> list[dict[str, Any]]:
        derived = self.__dict__.get("_derived")
        if derived is None:
            derived = derive_reference_actions(self.program, self.task)
            if derived is None:
                derived = []
                if self.task.hidden_ground_truth and (self.program.slug, self.task.id) not in _WARNED:
                    _WARNED.add((self.program.slug, self.task.id))
                    _log.warning(
                        "%s task %s has no reference solution: it has no reference_actions, and its "
                        "hidden_ground_truth cannot be produced from the tools' value templates; the oracle "
                        "answers without acting and will score 0 on it. Give the task reference_actions "
                        "(tool calls the oracle replays).",
                        self.program.slug,
                        self.task.id,
                    )
            self.__dict__["_derived"] = derived
        return derived

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    # -- fork (ForkableEnv): the state, the records and the scripted user ------------

    def _snapshot_state(self) -> dict[str, Any]:
        return workflow_state(self)

    def _restore_state(self, data: dict[str, Any]) -> None:
        restore_workflow(self, data)

    def close(self) -> None:
        self._closed = True
        self._done = True
