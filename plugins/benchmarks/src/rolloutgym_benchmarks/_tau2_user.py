"""The simulated user of a tau2 task: the workflow plugin's user section built from the task's
user scenario (opening, goal, persona, the facts of ``known_info``), and the device tools an
agent message asks the user to run (telecom)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["device_calls", "scenario_facts", "user_section"]


_FACTS = {
    "user_id": r"user id is '?([a-z]+_[a-z]+_\d+)'?|you are ([a-z]+_[a-z]+_\d+)",
    "email": r"\b([\w.+-]+@[\w-]+\.[\w.]+?)(?=[.,;]?(?:\s|$))",
    "zip": r"zip ?code (?:is )?(\d{5})",
    "phone_number": r"phone number (?:is )?(\d{3}-\d{3}-\d{4})",
    "name": r"you are (?!currently)([A-Z][a-z]+(?: [A-Z][a-z]+)+)|your name is ([A-Z][a-z]+(?: [A-Z][a-z]+)+)",
}


def scenario_facts(known_info: str) -> dict[str, str]:
    """The facts the scripted user holds, read from a scenario's ``known_info``."""
    facts = {}
    for fact, pattern in _FACTS.items():
        found = re.search(pattern, known_info, flags=0 if fact == "name" else re.IGNORECASE)
        if found:
            facts[fact] = next(group for group in found.groups() if group)
    return facts


def _first_person(text: str) -> str:
    swaps = [(r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"), (r"\byou're\b", "I'm")]
    swaps += [
        (r"\bYour\b", "My"),
        (r"\byour\b", "my"),
        (r"\bYou\b", "I"),
        (r"\byou\b", "me"),
        (r"\byourself\b", "myself"),
    ]
    for pattern, replacement in swaps:
        text = re.sub(pattern, replacement, text)
    return text


def user_section(task: Any) -> Any:
    """The workflow user section of a tau2 task's user scenario."""
    from rolloutgym_workflow.user import UserSection

    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return UserSection(opening="Hi, I need some help.", goal=instructions, max_turns=30)
    reason = (instructions.reason_for_call or "").strip()
    goal = "\n\n".join(
        part
        for part in (
            reason,
            instructions.known_info and f"What you know: {instructions.known_info}",
            instructions.unknown_info and f"What you do not know: {instructions.unknown_info}",
            instructions.task_instructions,
        )
        if part
    )
    opening = "Hi. " + _first_person(reason) if reason else "Hi, I need some help."
    facts = scenario_facts(instructions.known_info or "")
    return UserSection(opening=opening, goal=goal, persona=task.user_scenario.persona or "", facts=facts, max_turns=30)


def device_calls(text: str, names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The user tools an agent message asks the user to run: ``name()`` or ``name({json})``."""
    calls = []
    for found in re.finditer(r"\b([a-z_]+)\((\{.*?\})?\)", text):
        if found.group(1) in names:
            try:
                arguments = json.loads(found.group(2)) if found.group(2) else {}
            except json.JSONDecodeError:
                continue
            if isinstance(arguments, dict):
                calls.append((found.group(1), arguments))
    return calls
