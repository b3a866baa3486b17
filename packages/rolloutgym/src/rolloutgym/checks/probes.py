"""Hack probes: adversarial policies, one per class of exploit, that must score no more than ``null``.

A probe is a policy that plays a *script* against one env: a generator that reads what the
env showed (:attr:`EnvView.observation`) and, for probes that disguise the right answer, what
the oracle would do now (:attr:`EnvView.oracle`), and yields actions built for the env's action
space (:meth:`EnvView.reply`, :meth:`EnvView.call`). When the script ends, the probe finishes
the episode (the env's submit tool when it has one, else the null action).

Write your own by subclassing :class:`HackProbe` and return it from the
``rolloutgym_hack_probes()`` hook::

    from rolloutgym.checks import HackProbe

    class ShoutTheAnswer(HackProbe):
        name = "shouting"
        exploit = "the grader lower-cases nothing and rewards an answer in capitals"
        uses_oracle = True

        def play(self, view):
            while True:
                text = view.answer_text(view.oracle)
                yield view.oracle if text is None else view.reply(text.upper() + "!!!")
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Generator, Iterator
from typing import Any, ClassVar

import gymnasium as gym
from rolloutgym_protocol import find_attribute, spaces

__all__ = ["EnvView", "HackProbe", "ProbeNotApplicable", "answer_text", "observation_text", "tool_definitions"]

Script = Generator[Any, None, None]

_SHELL_NAMES = {"bash", "shell", "sh", "terminal", "run_command", "execute", "exec", "run_shell", "execute_command"}
_SHELL_PARAMETERS = ("command", "cmd", "script")
_PATH_PARAMETERS = ("path", "file_path", "filename", "file", "filepath")
_CONTENT_PARAMETERS = ("content", "contents", "text", "data", "new_content")
_SUBMIT_NAMES = ("submit", "finish", "done", "final_answer", "submit_answer", "end", "complete")


class ProbeNotApplicable(Exception):
    """Raised by a probe's script (or :meth:`HackProbe.applies`) when the env offers nothing to attack."""


def tool_definitions(environment: Any) -> list[dict[str, Any]]:
    """The env's advertised tools as ``{"name", "description", "parameters"}`` (``tools`` attribute or action space)."""
    tools = find_attribute(environment, "tools")
    if callable(tools):
        tools = tools()
    if not tools:
        space = getattr(environment, "action_space", None)
        definitions = getattr(space, "tool_definitions", None)
        tools = definitions() if callable(definitions) else []
    found = []
    for tool in tools if isinstance(tools, (list, tuple)) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function", tool)
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters") or function.get("input_schema") or {}
            found.append(
                {
                    "name": function["name"],
                    "description": str(function.get("description", "")),
                    "parameters": parameters if isinstance(parameters, dict) else {},
                }
            )
    return found


def observation_text(observation: Any) -> str:
    """An observation as plain text: a string, the contents of chat messages, else JSON."""
    if isinstance(observation, str):
        return observation
    if isinstance(observation, list) and all(isinstance(item, dict) for item in observation):
        return "\n".join(_content_text(item.get("content")) for item in observation)
    if isinstance(observation, dict) and "content" in observation:
        return _content_text(observation.get("content"))
    return json.dumps(observation, default=str)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def answer_text(action: Any) -> str | None:
    """The free-text answer of an action: a string, or an assistant message without tool calls."""
    if isinstance(action, str):
        return None if "<tool_call>" in action else action
    if isinstance(action, dict) and action.get("role") == "assistant" and not action.get("tool_calls"):
        return _content_text(action.get("content"))
    return None


class EnvView:
    """What a probe's script sees of the env: its action space, tools, observation and oracle.

    Attributes:
        environment: the env (possibly wrapped; use :func:`~rolloutgym_protocol.find_attribute`).
        kind: ``"text"`` (string actions), ``"message"`` (an assistant message, tool calls in it),
            ``"tool_call"`` (one ``{"name", "arguments"}``) or ``"other"``.
        tools: :func:`tool_definitions` of the env.
        observation: the latest observation.
        oracle: the oracle's action for this turn (probes with ``uses_oracle``).
        history: the observations seen so far, as text (tool results included).
    """

    def __init__(self, environment: Any) -> None:
        self.environment = environment
        space = getattr(environment, "action_space", None)
        if isinstance(space, (spaces.TextSpace, gym.spaces.Text)):
            self.kind = "text"
        elif isinstance(space, spaces.MessageSpace):
            self.kind = "message"
        elif type(space).__name__ == "ToolCallSpace":
            self.kind = "tool_call"
        else:
            self.kind = "other"
        self.tools = tool_definitions(environment)
        self.observation: Any = None
        self.oracle: Any = None
        self.history: list[str] = []
        self._calls = 0

    # -- what the env offers ----------------------------------------------------------

    def tool_names(self) -> list[str]:
        return [tool["name"] for tool in self.tools]

    def parameters(self, name: str) -> list[str]:
        for tool in self.tools:
            if tool["name"] == name:
                return list((tool["parameters"].get("properties") or {}).keys())
        return []

    def shell_tool(self) -> tuple[str, str] | None:
        """``(tool, parameter)`` of a tool that runs shell commands, if the env has one."""
        for tool in self.tools:
            parameters = self.parameters(tool["name"])
            for parameter in _SHELL_PARAMETERS:
                if parameter in parameters and (tool["name"].lower() in _SHELL_NAMES or len(parameters) <= 2):
                    return tool["name"], parameter
        return None

    def file_tool(self, purpose: str) -> tuple[str, str, str | None] | None:
        """``(tool, path parameter, content parameter)`` of a tool that writes, reads or lists files (``purpose``)."""
        for tool in self.tools:
            name, parameters = tool["name"].lower(), self.parameters(tool["name"])
            path = next((parameter for parameter in _PATH_PARAMETERS if parameter in parameters), None)
            content = next((parameter for parameter in _CONTENT_PARAMETERS if parameter in parameters), None)
            if path is None:
                continue
            if purpose == "write" and content is not None and ("write" in name or "create" in name):
                return tool["name"], path, content
            if purpose == "read" and content is None and ("read" in name or "cat" in name or "open" in name):
                return tool["name"], path, None
            if purpose == "list" and content is None and ("list" in name or name in ("ls", "glob", "find")):
                return tool["name"], path, None
        return None

    def submit_tool(self) -> str | None:
        names = {name.lower(): name for name in self.tool_names()}
        return next((names[name] for name in _SUBMIT_NAMES if name in names), None)

    def text_answers(self) -> bool:
        """Whether the env takes a free-text answer (a text action or an assistant message's content)."""
        return self.kind in ("text", "message")

    # -- building actions ---------------------------------------------------------------

    def reply(self, text: str) -> Any:
        """A text answer in the env's action space."""
        if self.kind == "message":
            return {"role": "assistant", "content": text}
        if self.kind == "text":
            return text
        raise ProbeNotApplicable("the env takes no text answer")

    def call(self, name: str, arguments: dict[str, Any], content: str = "") -> Any:
        """A call of tool ``name`` in the env's action space (Hermes ``<tool_call>`` text for text envs)."""
        self._calls += 1
        call = {"id": f"probe_{self._calls}", "name": name, "arguments": arguments}
        if self.kind == "message":
            return {"role": "assistant", "content": content, "tool_calls": [call]}
        if self.kind == "tool_call":
            return {"name": name, "arguments": arguments}
        if self.kind == "text":
            return f"{content}<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"
        raise ProbeNotApplicable("the env takes no tool calls")

    def answer_text(self, action: Any) -> str | None:
        """The free-text answer of an action (``None`` for tool calls and other actions)."""
        return answer_text(action)

    def finish(self) -> Any:
        """The action that ends the episode without doing the task: submit when the env has it, else null."""
        submit = self.submit_tool()
        if submit is not None:
            return self.call(submit, {})
        null = find_attribute(self.environment, "null_action")
        if null is not None:
            return null()
        return self.reply("")


class HackProbe:
    """An adversarial policy for one class of exploit. Subclass it and write :meth:`play`.

    Attributes:
        name: the probe's short name (``reward-file``); the card's check is ``probe:NAME``.
        exploit: one line: what a grader that falls for this probe does wrong.
        uses_oracle: the script reads :attr:`EnvView.oracle` (the right action, to disguise it);
            it is ``None`` for an env without an oracle, unless ``needs_oracle`` (then the probe does not apply).
        gated: the probe disguises the oracle's text answer; it is judged only on tasks where a
            near miss (the answer changed to a wrong one) scores no more than null, so that an env
            whose text answer is not what is graded is not blamed for it.
        variants: names of the variants; the probe plays each and its best score counts
            (with ``every_variant``, a task is flagged only when every variant scores above null).
    """

    name: ClassVar[str] = ""
    exploit: ClassVar[str] = ""
    uses_oracle: ClassVar[bool] = False
    needs_oracle: ClassVar[bool] = False
    gated: ClassVar[bool] = False
    variants: ClassVar[tuple[str, ...]] = ("",)
    every_variant: ClassVar[bool] = False

    def __init__(self, variant: str = "") -> None:
        self.variant = variant or self.variants[0]

    def applies(self, view: EnvView) -> str | None:
        """``None`` when the probe can attack this env, else why not (shown on the card)."""
        return None

    def play(self, view: EnvView) -> Iterator[Any]:
        """Yield the probe's actions; read ``view.observation`` (and ``view.oracle``) after each yield."""
        raise NotImplementedError

    def for_env(self, environment: Any) -> Any:
        """The rollout engine's per-episode callable (this is what makes a probe a policy)."""
        view = EnvView(environment)
        reason = self.applies(view)
        if reason is not None:
            raise ProbeNotApplicable(reason)
        script = iter(self.play(view))
        oracle = find_attribute(environment, "oracle_action") if self.uses_oracle else None
        if self.needs_oracle and oracle is None:
            raise ProbeNotApplicable("the env has no oracle_action() to disguise")

        async def act(observation: Any) -> Any:
            view.observation = observation
            view.history.append(observation_text(observation))
            if oracle is not None:
                try:
                    answer = oracle()
                    view.oracle = await answer if inspect.isawaitable(answer) else answer
                except Exception as exc:  # the oracle cannot play this task: nothing to disguise
                    if self.needs_oracle:
                        raise ProbeNotApplicable(f"the oracle cannot play this task ({exc})") from exc
                    view.oracle = None
            try:
                return next(script)
            except StopIteration:
                return view.finish()

        return act

    def __call__(self, observation: Any) -> Any:
        raise TypeError(f"the {self.name} probe needs its environment: run it through arollout()")
