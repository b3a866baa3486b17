"""The ``browser`` template of declarative environments (the rollout SDK's, run locally).

``compile_browser(environment)`` returns ``factory(task, **kwargs)``. A task's
``hidden_ground_truth`` may hold:

* ``submissions``: the forms the agent must submit, in order:
  ``[{"form"?: "contact", "fields": {"email": "a@b.c", "subscribe": true}}]`` (only the given
  fields are checked, and the number of submissions must match);
* ``state``: ``{dotted.path: value}`` that must hold in the site's state;
* ``url``: the path the agent must end on;
* ``answer``: the expected final answer (a value or a list of accepted values);
* ``setup``: initial state for this task.

The oracle replays the task's ``reference_actions`` (then ``reference_answer``) or, when it
has none, a solution derived from the ground truth (fill and submit each form, go to
``url``, give ``answer``). When the environment has a verifier (``env.verifier`` or
``config["defaultVerifier"]``), it grades instead, over the site's state and the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol import Score
from rolloutgym_protocol.errors import EnvFileError

from ._config import parse_browser_config
from ._task import BrowserTask, EpisodeOutcome
from ._template_site import TemplateSite
from .envs import BrowserEnv

__all__ = ["compile_browser", "task_from_declarative"]

_ENV_OPTIONS = frozenset({"backend", "screenshot", "viewport", "chromium_path"})
_TRUTH_KEYS = ("submissions", "state", "url", "finalUrl", "answer", "setup")
_PATH_SAFE = re.compile(r"^[A-Za-z0-9_-]+$")


def _field(task: Any, name: str, default: Any = None) -> Any:
    if isinstance(task, Mapping):
        return task.get(name, default)
    return getattr(task, name, default)


def _option_label(element: Any, value: Any) -> str | None:
    for option_value, label in element.options:
        if str(value) in (option_value, label):
            return label
    return None


def _derived_oracle(site: TemplateSite, truth: Mapping[str, Any], where: str) -> list[dict[str, Any]] | None:
    calls: list[dict[str, Any]] = []
    current = site.initial_url
    for index, expected in enumerate(truth.get("submissions") or []):
        fields = dict(expected.get("fields") or {})
        found = site.find_form(expected.get("form"), list(fields))
        if found is None:
            return None
        form, page = found
        if current.split("?", 1)[0] != page:
            calls.append({"name": "goto", "arguments": {"path": page}})
        by_name = {element.name: element for element, _ in form.walk() if element.name}
        for name, value in fields.items():
            element = by_name.get(name)
            if element is None:
                raise EnvFileError(
                    f"{where}.submissions[{index}].fields.{name}: form {form.id!r} has no field {name!r}"
                )
            if element.kind == "textbox":
                calls.append({"name": "type", "arguments": {"element_id": element.id, "text": str(value)}})
            elif element.kind == "select":
                label = _option_label(element, value)
                if label is None:
                    raise EnvFileError(
                        f"{where}.submissions[{index}].fields.{name}: {value!r} is not an option of {name!r}"
                    )
                calls.append({"name": "select", "arguments": {"element_id": element.id, "option": label}})
            elif element.kind == "checkbox":
                calls.append({"name": "check", "arguments": {"element_id": element.id, "checked": bool(value)}})
        button = next(element for element, _ in form.walk() if element.kind == "button" and not element.href)
        calls.append({"name": "click", "arguments": {"element_id": button.id}})
        current = "/_submitted"
    url = truth.get("url") or truth.get("finalUrl")
    if url:
        calls.append({"name": "goto", "arguments": {"path": url}})
    if truth.get("answer") is not None:
        answer = truth["answer"]
        first = answer[0] if isinstance(answer, (list, tuple)) else answer
        calls.append({"name": "answer", "arguments": {"text": str(first)}})
    return calls


def _reference(task: Any) -> list[dict[str, Any]] | None:
    actions = _field(task, "reference_actions") or []
    answer = _field(task, "reference_answer")
    if not actions and answer is None:
        return None
    calls: list[dict[str, Any]] = []
    for action in actions:
        if isinstance(action, Mapping) and "tool_calls" in action:
            calls.extend(
                {"name": call["name"], "arguments": dict(call.get("arguments") or {})} for call in action["tool_calls"]
            )
        elif isinstance(action, Mapping):
            calls.append({"name": action["name"], "arguments": dict(action.get("arguments") or {})})
    if answer is not None:
        calls.append({"name": "answer", "arguments": {"text": str(answer)}})
    return calls


def task_from_declarative(
    task: Any, site: TemplateSite, *, index: int = 0, graded_by_verifier: bool = False
) -> BrowserTask:
    """Turn a declarative ``Task`` (or a mapping with its fields) into a :class:`BrowserTask`.

    Raises:
        EnvFileError: unknown ground-truth keys, malformed submissions, or nothing to grade.
    """
    identifier = str(_field(task, "id") or index)
    where = f"task {identifier!r}: hidden_ground_truth"
    truth = _field(task, "hidden_ground_truth") or {}
    if not isinstance(truth, Mapping):
        raise EnvFileError(f"{where}: must be an object")
    unknown = sorted(set(truth) - set(_TRUTH_KEYS))
    if unknown and not graded_by_verifier:
        raise EnvFileError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the browser template reads {', '.join(_TRUTH_KEYS)}"
        )
    paths: dict[str, Any] = {}
    submissions = truth.get("submissions")
    if submissions is not None:
        if not isinstance(submissions, list):
            raise EnvFileError(f"{where}.submissions: must be a list of {{'form'?, 'fields'}}")
        paths["submissions.length"] = len(submissions)
        for position, expected in enumerate(submissions):
            if not isinstance(expected, Mapping) or not isinstance(expected.get("fields", {}), Mapping):
                raise EnvFileError(
                    f"{where}.submissions[{position}]: must be {{'form'?: id, 'fields': {{name: value}}}}"
                )
            if expected.get("form") is not None:
                paths[f"submissions[{position}].form"] = str(expected["form"])
            for name, value in (expected.get("fields") or {}).items():
                if not _PATH_SAFE.match(str(name)):
                    raise EnvFileError(
                        f"{where}.submissions[{position}].fields: field name {name!r} must use letters, digits, '_' "
                        "or '-'"
                    )
                paths[f"submissions[{position}].fields.{name}"] = value if isinstance(value, bool) else str(value)
    state = truth.get("state")
    if state is not None:
        if not isinstance(state, Mapping):
            raise EnvFileError(f"{where}.state: must be {{dotted.path: value}}")
        paths.update(state)
    input_data = _field(task, "input") or {}
    start = input_data.get("startUrl") if isinstance(input_data, Mapping) else None
    oracle = _reference(task)
    if oracle is None:
        oracle = _derived_oracle(site, truth, where)
    instruction = str(_field(task, "instruction") or "")
    if isinstance(input_data, Mapping) and input_data:
        instruction += "\n\nInput:\n" + json.dumps(dict(input_data), indent=2)
    browser_task = BrowserTask(
        id=identifier,
        split=str(_field(task, "split") or "dev"),
        instruction=instruction,
        start_url=str(start or site.initial_url),
        setup=dict(truth.get("setup") or {}),
        expected_paths=paths or None,
        expected_url=truth.get("url") or truth.get("finalUrl"),
        answer=truth.get("answer"),
        oracle=tuple(oracle) if oracle is not None else None,
        skills=tuple((_field(task, "metadata") or {}).get("skills", ())),
    )
    if not graded_by_verifier and not browser_task.has_ground_truth:
        raise EnvFileError(
            f"{where}: nothing to grade; give 'submissions', 'state', 'url' or 'answer' (or an env verifier)"
        )
    return browser_task


def _verifier_grader(config: Mapping[str, Any]) -> Callable[[BrowserTask, EpisodeOutcome], Score]:
    from rolloutgym.verifiers import ToolCallRecord, VerifierContext, build_verifier

    verifier = build_verifier(config)

    def grade(task: BrowserTask, outcome: EpisodeOutcome) -> Score:
        records = [
            ToolCallRecord(str(call.get("name")), call.get("arguments"), call.get("result"), call.get("error"))
            for call in outcome.tool_calls
        ]
        return verifier.score(
            VerifierContext(final_state=dict(outcome.state), final_output=outcome.answer, tool_calls=records, task=task)
        )

    return grade


def compile_browser(environment: Any) -> Callable[..., BrowserEnv]:
    """Compile a declarative ``browser`` environment; returns ``factory(task, **kwargs)``.

    ``kwargs`` go to :class:`~rolloutgym_browser.BrowserEnv` (``backend="chromium"``,
    ``screenshot=True``, ``viewport=...``).

    Raises:
        EnvFileError: the config or a task is malformed (the message gives the path).
    """
    config = _field(environment, "config")
    site = parse_browser_config(config or {})
    verifier_config = _field(environment, "verifier") or (config or {}).get("defaultVerifier")
    grader = _verifier_grader(verifier_config) if verifier_config else None
    name = str(_field(environment, "name") or _field(environment, "slug") or "a website")
    description = _field(environment, "description") or (config or {}).get("description")
    for index, task in enumerate(_field(environment, "tasks") or []):
        task_from_declarative(task, site, index=index, graded_by_verifier=grader is not None)

    def factory(task: Any, **kwargs: Any) -> BrowserEnv:
        if isinstance(task, BrowserTask):
            browser_task = task
        else:
            browser_task = task_from_declarative(task, site, graded_by_verifier=grader is not None)
        unknown = sorted(set(kwargs) - _ENV_OPTIONS)
        if unknown:
            raise EnvFileError(
                f"the browser template does not take {', '.join(map(repr, unknown))}; its options are "
                f"{', '.join(sorted(_ENV_OPTIONS))} (e.g. --env-arg backend=chromium)"
            )
        return BrowserEnv(site, browser_task, name=name, description=description, grader=grader, **kwargs)

    return factory
