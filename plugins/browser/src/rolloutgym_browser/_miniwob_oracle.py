"""Scripted solutions of a representative subset of MiniWoB++ tasks (the ``oracle`` policy).

Each script reads what an agent reads (the instruction and the page text's elements) and
returns the tool calls that solve the episode; the page's own JavaScript then scores them.
The subset covers every element-level skill: clicking buttons/links/dialogs by text,
typing, focusing, checkboxes, radio buttons, lists, multi-field logins and sequences.
Tasks outside :data:`SCRIPTED` have no reference solution: the oracle policy refuses them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol.errors import PolicyError

if TYPE_CHECKING:
    from ._miniwob_page import PageElement

__all__ = ["SCRIPTED", "next_call"]

Call = tuple[str, dict[str, Any]]
Plan = Callable[[str, "list[PageElement]"], list[Call]]


def _quoted(utterance: str) -> list[str]:
    return re.findall(r'"([^"]*)"', utterance)


def _find(elements: list[PageElement], kinds: tuple[str, ...], label: str | None = None) -> PageElement:
    for element in elements:
        if element.kind in kinds and (label is None or element.label == label):
            return element
    raise PolicyError(f"the scripted solution found no {'/'.join(kinds)} {label or ''!r} on the page")


def _click(element: PageElement) -> Call:
    return ("click", {"element_id": element.id})


def _type(element: PageElement, text: str) -> Call:
    return ("type", {"element_id": element.id, "text": text})


def _submit(elements: list[PageElement], label: str = "Submit") -> Call:
    return _click(_find(elements, ("button",), label))


def _click_button(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_click(_find(elements, ("button",), _quoted(utterance)[0]))]


def _click_link(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_click(_find(elements, ("link",), _quoted(utterance)[0]))]


def _click_dialog(utterance: str, elements: list[PageElement]) -> list[Call]:
    close = next(element for element in elements if element.kind == "button" and "close" in element.label.casefold())
    return [_click(close)]


def _enter_text(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_type(_find(elements, ("textbox",)), _quoted(utterance)[0]), _submit(elements)]


def _focus_text(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_click(_find(elements, ("textbox",)))]


def _focus_text_2(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.search(r"(\d+)(?:st|nd|rd|th)", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    boxes = [element for element in elements if element.kind == "textbox"]
    return [_click(boxes[int(match.group(1)) - 1])]


def _click_checkboxes(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Select (.*) and click Submit\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    wanted = set() if match.group(1) == "nothing" else {word.strip() for word in match.group(1).split(",")}
    calls = [
        ("check", {"element_id": element.id, "checked": True})
        for element in elements
        if element.kind == "checkbox" and element.label in wanted
    ]
    return [*calls, _submit(elements)]


def _click_option(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Select (.*) and click Submit\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    radio = _find(elements, ("radio",), match.group(1))
    return [("check", {"element_id": radio.id, "checked": True}), _submit(elements)]


def _choose_list(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Select (.*) from the list and click Submit\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    select = _find(elements, ("select",))
    return [("select", {"element_id": select.id, "option": match.group(1)}), _submit(elements)]


def _login_user(utterance: str, elements: list[PageElement]) -> list[Call]:
    user, password = _quoted(utterance)
    return [
        _type(_find(elements, ("textbox",), "username"), user),
        _type(_find(elements, ("textbox",), "password"), password),
        _submit(elements, "Login"),
    ]


def _enter_password(utterance: str, elements: list[PageElement]) -> list[Call]:
    (password,) = _quoted(utterance)
    return [
        _type(_find(elements, ("textbox",), "password"), password),
        _type(_find(elements, ("textbox",), "verify"), password),
        _submit(elements),
    ]


def _click_test(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_click(_find(elements, ("button",)))]


def _click_test_2(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Click button (\w+)\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    return [_click(_find(elements, ("button",), match.group(1)))]


def _click_button_sequence(utterance: str, elements: list[PageElement]) -> list[Call]:
    return [_click(_find(elements, ("button",), "ONE")), _click(_find(elements, ("button",), "TWO"))]


def _click_tab(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Click on (Tab #\d+)\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    return [_click(_find(elements, ("link",), match.group(1)))]


def _use_spinner(utterance: str, elements: list[PageElement]) -> list[Call]:
    match = re.fullmatch(r"Select (-?\d+) with the spinner and hit Submit\.", utterance)
    if match is None:
        raise PolicyError(f"the scripted solution cannot read {utterance!r}")
    return [_type(_find(elements, ("textbox",)), match.group(1)), _submit(elements)]


SCRIPTED: dict[str, Plan] = {
    "click-button": _click_button,
    "click-button-sequence": _click_button_sequence,
    "click-checkboxes": _click_checkboxes,
    "click-dialog": _click_dialog,
    "click-link": _click_link,
    "click-option": _click_option,
    "click-test": _click_test,
    "click-tab": _click_tab,
    "click-test-2": _click_test_2,
    "choose-list": _choose_list,
    "enter-password": _enter_password,
    "enter-text": _enter_text,
    "focus-text": _focus_text,
    "focus-text-2": _focus_text_2,
    "login-user": _login_user,
    "use-spinner": _use_spinner,
}
"""Task name -> its scripted solution ``plan(utterance, elements) -> tool calls``."""


async def next_call(environment: Any) -> Call | None:
    """The next call of ``environment``'s scripted solution (None once the plan is played)."""
    plan = SCRIPTED.get(environment.task.id)
    if plan is None:
        raise PolicyError(
            f"MiniWoB task {environment.task.id!r} has no scripted solution; the oracle covers: "
            f"{', '.join(sorted(SCRIPTED))}"
        )
    if environment._oracle is None:
        _, _, elements = await environment.current_elements()
        environment._oracle = list(plan(environment._utterance, elements))
    remaining: list[Call] = environment._oracle
    return remaining.pop(0) if remaining else None
