"""The scripted user of conversational workflow tasks: offline, deterministic, from rules.

:class:`ScriptedUser` plays a task's :class:`~rolloutgym_workflow.user.UserSection`. What it
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
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol.display import safe_str

if TYPE_CHECKING:
    from .user import UserSection  # user.py builds scripted users: no runtime import back

__all__ = ["ScriptedUser", "fact_requests"]


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


def fact_requests(agent_message: str, facts: Mapping[str, Any] = {}) -> list[str]:  # noqa: B006 (read only)
    """The facts an agent message asks the user for (``email``, ``order_id``, ...), as the scripted user reads it;
    ``facts`` of other names (``user_id``) count when asked for by name."""
    text = _requests(_clean(agent_message))
    asked = [fact for fact, pattern in _FACT_PATTERNS.items() if pattern.search(text)]
    for fact in facts:
        if fact not in _FACT_PATTERNS and re.search(r"\b" + re.escape(fact.replace("_", " ")) + r"\b", text):
            asked.append(fact)
    return asked


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
