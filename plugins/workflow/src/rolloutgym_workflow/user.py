"""Simulated users for conversational workflow tasks (tau-bench style).

A conversational task has a ``user`` section (:class:`UserSection`): the user holds the goal
(the task's ``instruction``) and private ``facts`` (email, order id, item, new address, ...)
and reveals them only when the agent asks. The agent sees the conversation: the user's
``opening`` message, then the user's answers and the tool results.

Two kinds of user:

* :class:`~rolloutgym_workflow.scripted_user.ScriptedUser` (default; offline, deterministic)
  answers from rules (``scripted_user.py`` lists what it understands).

* :class:`ModelUser`: any policy provider plays the user (``user_policy=openai:MODEL``,
  ``hf:...``), prompted from the same persona, goal and facts; it ends the conversation by
  writing ``###STOP###``. Its turns are observations for the agent (loss mask 0) and never
  count as the agent's tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol.errors import ConfigError, EnvFileError

from .scripted_user import ScriptedUser, _say

__all__ = [
    "END_OF_CONVERSATION",
    "RESPOND_TOOL",
    "ModelUser",
    "UserSection",
    "make_user",
    "parse_user_section",
]

END_OF_CONVERSATION = "###STOP###"
"""What a user writes to end the conversation (tau-bench's marker); never shown to the agent."""

RESPOND_TOOL = "respond_to_user"
"""The tool a conversational env adds: ``respond_to_user(message)`` sends a message to the user,
exactly like an assistant message without tool calls."""

_KEYS = {"opening", "persona", "facts", "wrong_first", "change", "pressure", "accept", "max_turns", "kind", "goal"}


@dataclass(frozen=True)
class UserSection:
    """A task's ``user`` section, validated.

    Attributes:
        opening: the user's first message (their request, without the private facts).
        goal: what the user wants (the task's instruction); a model-driven user is told it.
        persona: who the user is (for a model-driven user's prompt).
        facts: private facts, revealed only when asked (``email``, ``name``, ``order_id``,
            ``item``, ``reason``, ``address``, ``amount``, ``variant`` or any other key).
        wrong_first: facts the user first gets wrong (``{"email": "alice.shop@example.net"}``);
            told that no account matches, the user gives the right one.
        change: the message with which the user changes their request the first time the
            agent asks for confirmation (None: no change).
        pressure: messages the user sends, one per refusal, to talk the agent into breaking
            policy; after the last one the user accepts the refusal.
        accept: whether the user says yes to the agent's proposals.
        max_turns: agent messages after which the user leaves.
        kind: ``"scripted"`` (default) or ``"model"`` (needs ``user_policy``).
    """

    opening: str
    goal: str = ""
    persona: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)
    wrong_first: Mapping[str, Any] = field(default_factory=dict)
    change: str | None = None
    pressure: tuple[str, ...] = ()
    accept: bool = True
    max_turns: int = 12
    kind: str = "scripted"


def parse_user_section(data: Any, *, goal: str = "", where: str = "task") -> UserSection:
    """Validate a task's ``user`` section.

    Raises:
        EnvFileError: naming the field and what to write instead.
    """
    if not isinstance(data, Mapping):
        raise EnvFileError(f"{where}: 'user' must be a JSON object with at least 'opening'")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise EnvFileError(
            f"{where}: unknown user field(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(_KEYS))}"
        )
    opening = data.get("opening")
    if not isinstance(opening, str) or not opening.strip():
        raise EnvFileError(f"{where}: user.opening must be the user's first message (a non-empty string)")
    for key in ("facts", "wrong_first"):
        if not isinstance(data.get(key, {}), Mapping):
            raise EnvFileError(f"{where}: user.{key} must be a JSON object of fact name -> value")
    wrong = dict(data.get("wrong_first") or {})
    facts = dict(data.get("facts") or {})
    missing = sorted(set(wrong) - set(facts))
    if missing:
        raise EnvFileError(f"{where}: user.wrong_first names {', '.join(missing)}, which user.facts does not hold")
    pressure = data.get("pressure") or []
    if isinstance(pressure, str):
        pressure = [pressure]
    if not isinstance(pressure, list) or not all(isinstance(item, str) for item in pressure):
        raise EnvFileError(f"{where}: user.pressure must be a list of messages")
    change = data.get("change")
    if change is not None and not isinstance(change, str):
        raise EnvFileError(f"{where}: user.change must be the message with which the user changes their request")
    kind = data.get("kind", "scripted")
    if kind not in ("scripted", "model"):
        raise EnvFileError(f"{where}: user.kind must be 'scripted' or 'model', got {kind!r}")
    max_turns = data.get("max_turns", 12)
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1:
        raise EnvFileError(f"{where}: user.max_turns must be a positive integer")
    return UserSection(
        opening=opening,
        goal=str(data.get("goal") or goal),
        persona=str(data.get("persona") or ""),
        facts=facts,
        wrong_first=wrong,
        change=change,
        pressure=tuple(pressure),
        accept=bool(data.get("accept", True)),
        max_turns=max_turns,
        kind=kind,
    )


class _UserSide:
    """What a policy playing the user sees as its environment: the chat so far, no tools; it
    answers with one assistant message (so a policy that samples the action space, such as
    ``random``, can play the user too)."""

    tools: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {}

    def __init__(self) -> None:
        from rolloutgym_protocol import spaces

        self.action_space = spaces.MessageSpace(roles=("assistant",))
        self.observation_space = spaces.ChatSpace()


class ModelUser:
    """A policy plays the user (any provider: ``openai:MODEL``, ``hf:PATH``, ...).

    The policy sees a system prompt (persona, goal, facts, how to behave) and the
    conversation with roles swapped (the agent's messages as user messages). It ends the
    conversation by writing :data:`END_OF_CONVERSATION`.
    """

    def __init__(self, section: UserSection, policy: Any) -> None:
        self.section = section
        self.policy = policy
        self.turns = 0
        self._episode = policy.for_env(_UserSide()) if hasattr(policy, "for_env") else policy
        self._started = False

    def system_prompt(self) -> str:
        section = self.section
        facts = "\n".join(f"- {key}: {_say(value)}" for key, value in section.facts.items()) or "- (none)"
        wrong = "".join(
            f"\nThe first time you are asked for your {key}, give {_say(value)} by mistake."
            for key, value in section.wrong_first.items()
        )
        pressure = f"\nIf the agent refuses, insist once: {section.pressure[0]}" if section.pressure else ""
        return (
            "You are a customer talking to a support agent. Stay in character; write only what the customer says.\n"
            f"Who you are: {section.persona or 'a customer'}\nYour goal: {section.goal or section.opening}\n"
            f"Facts you know (share one only when the agent asks for it):\n{facts}{wrong}{pressure}\n"
            f"When your request is handled or clearly refused, say thanks and write {END_OF_CONVERSATION}."
        )

    def opening(self) -> str:
        return self.section.opening

    def reply(self, agent_message: str) -> tuple[str, bool]:
        from rolloutgym.verifiers import call_policy

        self.turns += 1
        if self.turns > self.section.max_turns:
            return "I have to go now, goodbye.", True
        if not self._started:
            self._started = True
            observation: list[dict[str, Any]] = [
                {"role": "system", "content": self.system_prompt()},
                {"role": "assistant", "content": self.section.opening},
                {"role": "user", "content": agent_message},
            ]
        else:
            observation = [{"role": "user", "content": agent_message}]
        action = call_policy(self._episode, observation)
        text = action.get("content") if isinstance(action, Mapping) else action
        text = text if isinstance(text, str) else str(text or "")
        ended = END_OF_CONVERSATION in text
        text = text.replace(END_OF_CONVERSATION, "").strip()
        return text or ("Thanks, goodbye." if ended else "..."), ended


def make_user(section: UserSection, *, user_policy: Any = None) -> ScriptedUser | ModelUser:
    """The simulated user of one episode: scripted, or ``user_policy`` playing it.

    Raises:
        ConfigError: the section asks for a model-driven user and no ``user_policy`` was given.
    """
    if user_policy is not None:
        if isinstance(user_policy, str):
            from rolloutgym.registry import get_registry

            user_policy = get_registry().make_policy(user_policy)
        return ModelUser(section, user_policy)
    if section.kind == "model":
        raise ConfigError(
            "this task's user is model-driven (user.kind = 'model'): pass a policy to play it, "
            "e.g. --user-policy openai:gpt-4o-mini or --env-arg user_policy=hf:smollm2"
        )
    return ScriptedUser(section)


def agent_text(message: Any, calls: Sequence[Mapping[str, Any]] = ()) -> str:
    """The text an agent action sends to the user: its content, or ``respond_to_user`` arguments."""
    pieces = []
    content = message.get("content") if isinstance(message, Mapping) else message
    if isinstance(content, str) and content.strip():
        pieces.append(content)
    elif isinstance(content, list):
        pieces.append("".join(part.get("text", "") for part in content if isinstance(part, Mapping)))
    for call in calls:
        arguments = call.get("arguments")
        if isinstance(arguments, Mapping) and isinstance(arguments.get("message"), str):
            pieces.append(arguments["message"])
    return "\n".join(piece for piece in pieces if piece)
