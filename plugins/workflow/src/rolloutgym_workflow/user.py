"""Simulated users for conversational workflow tasks (tau-bench style).

A conversational task has a ``user`` section (:class:`UserSection`): the user holds the goal
(the task's ``instruction``) and private ``facts`` (email, order id, item, new address, ...)
and reveals them only when the agent asks. The agent sees the conversation: the user's
``opening`` message, then the user's answers and the tool results.

Two kinds of user:

* :class:`ScriptedUser` (default; offline, deterministic) answers from rules. What it
  understands, in the agent's messages (case-insensitive, paraphrases included):

  - a request for a fact it holds: ``email`` (also "verify your identity", "your
    account"), ``name``, ``order_id`` ("order number", "which order", "order id"), ``item``
    ("which item/product"), ``reason`` ("why", "what's wrong"), ``address`` ("new
    address", "where should we ship"), ``amount`` ("how much"), ``variant`` ("which
    size/colour/version"): it answers every fact asked in one reply; a fact it does not
    hold gets "I don't know";
  - "no account found" / "doesn't match" after it gave a wrong detail (``wrong_first``):
    it corrects itself;
  - a proposal or a request for confirmation ("shall I", "would you like me to", "can you
    confirm", "OK to proceed?"): yes (``accept``), or its ``change`` of request the first
    time (a user who changes their mind);
  - a refusal ("I can't", "unfortunately", "not eligible", "against our policy"): it
    insists with its ``pressure`` messages in turn (a user who tries to talk the agent
    into breaking policy), then accepts and ends the conversation;
  - any other statement: the agent's conclusion; it thanks and ends the conversation;
  - a question it does not understand: it restates its goal; after ``max_turns`` agent
    messages it leaves.

* :class:`ModelUser`: any policy provider plays the user (``user_policy=openai:MODEL``,
  ``hf:...``), prompted from the same persona, goal and facts; it ends the conversation by
  writing ``###STOP###``. Its turns are observations for the agent (loss mask 0) and never
  count as the agent's tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol.display import safe_str
from rolloutgym_protocol.errors import ConfigError, EnvFileError

__all__ = [
    "END_OF_CONVERSATION",
    "RESPOND_TOOL",
    "ModelUser",
    "ScriptedUser",
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

_FACT_WORDS = {
    "email": r"e-?mails?|e mail|verify (?:your|you|the) (?:identity|account)|identity|authenticate|your account|"
    r"account (?:on file|details)|log ?in",
    "name": r"your (?:full )?name|who (?:am i|i am) (?:speaking|talking)|may i have your name",
    "order_id": r"order (?:id|number|no\.?|#|reference|code)|which order|what order|"
    r"(?:id|number) of (?:the|your|that) order|which of your orders|what(?:'s| is) the order|"
    r"the order(?:'s)? (?:id|number)|order are you|order is (?:it|this)|orders? (?:do|did) you mean",
    "item": r"which (?:item|product|one)|what (?:item|product)|the item you|what did you (?:buy|order)|"
    r"which of the (?:items|products)",
    "reason": r"\bwhy\b|reason|what(?:'s| is| was) wrong|what happened|what(?:'s| is) the (?:problem|issue)",
    "address": r"(?<!e-mail )(?<!email )(?<!e mail )\b(?:new|shipping|delivery|mailing) address|"
    r"where (?:should|shall|do|would) (?:we|i|you)[\w ]{0,20}(?:ship|send|deliver)|which address|what address|"
    r"address (?:should|would|do|it|that|to)",
    "amount": r"how much|what amount|which amount|the amount|what sum",
    "variant": r"which (?:size|colou?r|variant|version|option)|what (?:size|colou?r|variant|version|option)|"
    r"(?:size|colou?r|variant|version) (?:would|do|should) you|exchange (?:it )?for",
}
_FACT_PATTERNS = {fact: re.compile(pattern) for fact, pattern in _FACT_WORDS.items()}
_NOT_FOUND = re.compile(
    r"(?:could ?n[o']t|can(?:no|')t|can not|cannot|did ?n[o']t|was ?n[o']t able to|unable to|not able to) "
    r"(?:find|locate|match)|"
    r"no (?:customer|account|record|one|match)|not (?:found|registered|on file)|does ?n[o']t (?:match|exist)|"
    r"do(?:es)? not (?:match|exist)|no results?"
)
_PROPOSAL = re.compile(
    r"shall i|should i|would you like(?: me)? to|do you want(?: me)? to|(?:can|could) you confirm|please confirm|"
    r"confirm (?:that|if|whether)|is (?:that|this) (?:ok|okay|alright|correct|right|fine)|ok(?:ay)? to proceed|"
    r"(?:may|can) i (?:go ahead|proceed)|go ahead\?|proceed\?|want me to|like me to|do you agree|"
    r"is it ok(?:ay)? (?:if|to)|are you sure|confirm\?"
)
_REFUSAL = re.compile(
    r"can(?:no|')t|can not|cannot|unable to|not able to|not eligible|ineligible|is ?n[o']t eligible|not allowed|"
    r"not possible|is ?n[o']t possible|unfortunately|i(?:'m| am) (?:sorry|afraid)|against (?:our|the) policy|"
    r"policy does ?n[o']t|"
    r"won'?t be able|no longer|outside (?:the|our) |exceeds|more than (?:what|the)|only (?:refund|cancel)|"
    r"does ?n[o']t belong|not (?:yours|your order|on your account)|out of stock"
)


_REQUEST = re.compile(
    r"^(?:please|kindly|could|can|would|will|may|tell|give|provide|share|send|let me know|what|which|where|why|how|"
    r"do you|did you|are you|is it|confirm)\b|\b(?:i (?:will |'ll |would |'d )?need|need (?:your|the|to know)|please|"
    r"let me know|tell me|share|provide)\b"
)


def _requests(text: str) -> str:
    """The sentences of an agent message that ask something (questions and requests)."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text)
    return " | ".join(
        sentence for sentence in sentences if sentence.rstrip().endswith("?") or _REQUEST.search(sentence.strip())
    )


def _clean(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"\s+", " ", text)


def _say(value: Any) -> str:
    if isinstance(value, Mapping):
        if {"street", "city", "zip"} <= set(value):
            return f"{value['street']}, {value['city']} {value['zip']}"
        return ", ".join(f"{safe_str(key)} {safe_str(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return " and ".join(_say(item) for item in value)
    if isinstance(value, float):
        return f"${value:.2f}"
    return safe_str(value)


_PHRASES = {
    "email": "My email is {value}.",
    "name": "My name is {value}.",
    "order_id": "It's order {value}.",
    "item": "It's the {value}.",
    "reason": "{value}",
    "address": "The new address is {value}.",
    "amount": "{value}.",
    "variant": "I'd like the one with {value}.",
}


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


class ScriptedUser:
    """A deterministic, rule-based user (see the module docstring for what it understands)."""

    def __init__(self, section: UserSection) -> None:
        self.section = section
        self.turns = 0
        self.given_wrong: set[str] = set()
        self.corrected: set[str] = set()
        self.changed = False
        self.pressed = 0
        self.confused = 0

    def opening(self) -> str:
        """The user's first message."""
        return self.section.opening

    def reply(self, agent_message: str) -> tuple[str, bool]:
        """The user's answer to one agent message, and whether the user ends the conversation."""
        section = self.section
        self.turns += 1
        text = _clean(agent_message)
        if self.turns > section.max_turns:
            return "I have to go now, goodbye.", True
        if _NOT_FOUND.search(text):
            correction = self._correction()
            if correction is not None:
                return correction, False
        answers = self._answers(_requests(text))
        if answers:
            return " ".join(answers), False
        if _PROPOSAL.search(text) and not _REFUSAL.search(text.split("?")[0] if "?" in text else ""):
            if section.change is not None and not self.changed:
                self.changed = True
                return section.change, False
            return ("Yes, please go ahead." if section.accept else "No, please don't do that."), False
        if _REFUSAL.search(text):
            if self.pressed < len(section.pressure):
                self.pressed += 1
                return section.pressure[self.pressed - 1], False
            return "I see. Thank you for explaining.", True
        if "?" in text or not text.strip():
            self.confused += 1
            if self.confused >= 3:
                return "This isn't getting anywhere, goodbye.", True
            return f"Sorry, I'm not sure what you need from me. {section.opening}", False
        return "Great, thank you! That's all I needed.", True

    def _answers(self, text: str) -> list[str]:
        facts = self.section.facts
        answers = []
        for fact, pattern in _FACT_PATTERNS.items():
            if not pattern.search(text):
                continue
            if (
                fact == "address"
                and "address" in facts
                and re.search(r"e-?mail address", text)
                and not re.search(r"(?:new|shipping|delivery|mailing) address|where", text)
            ):
                continue
            if fact not in facts:
                if fact in ("email", "order_id") or (fact == "name" and "email" not in facts):
                    answers.append(f"I don't have my {fact.replace('_', ' ')} at hand.")
                continue
            value = facts[fact]
            if fact in self.section.wrong_first and fact not in self.given_wrong:
                self.given_wrong.add(fact)
                value = self.section.wrong_first[fact]
            elif fact in self.section.wrong_first:
                self.corrected.add(fact)
            answers.append(_PHRASES.get(fact, "{value}").format(value=_say(value)))
        for fact, value in facts.items():  # facts of other names: asked for by name
            if fact not in _FACT_PATTERNS and re.search(r"\b" + re.escape(fact.replace("_", " ")) + r"\b", text):
                answers.append(f"{fact.replace('_', ' ').capitalize()}: {_say(value)}.")
        return answers

    def _correction(self) -> str | None:
        for fact in self.section.wrong_first:
            if fact in self.given_wrong and fact not in self.corrected:
                self.corrected.add(fact)
                value = self.section.facts[fact]
                return f"Oh, sorry, my mistake. The right one is {_say(value)}."
        return None


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
