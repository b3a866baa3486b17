"""The BFCL environments: one single-turn env class and one multi-turn env class.

Chat-environment convention (as ``workflow/refund-v0``): observations are chat messages,
``env.tools`` holds OpenAI-style tool definitions built from the task's function docs, and
an action is an assistant message whose ``tool_calls`` are the function calls.

* Single-turn categories: ``reset`` shows the question; the first reply is graded and ends
  the episode (AST match against the possible answers; irrelevance: right when the reply
  calls nothing; relevance: right when it calls something).
* Multi-turn categories: each user turn is answered by any number of tool-calling replies;
  the calls run on the task's backend instances and the results come back as tool
  messages; a reply without tool calls ends the turn and the next user turn follows. After
  each turn the backends' state must equal the state the reference calls produce and the
  reference calls' results must appear among the results of the calls so far (BFCL's state
  and response checks). More than 20 tool-calling replies in one turn end the episode with
  0, as BFCL's harness force-terminates such an entry.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import Score, SingleTurnEnv, spaces
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_protocol.toolcalls import normalize_tool_action

from ._categories import Category, category_for_env
from ._data import BfclTask, package_version, tasks_for_env
from ._decode import decode_reply, is_call_format, is_empty_output
from ._execution import Backends, parse_call_string, render_call
from ._oracle import reference_calls, relevance_call
from ._tools import tool_definitions
from .grading import check_calls

__all__ = ["BfclMultiTurnEnv", "BfclSingleTurnEnv", "make_env"]

Messages = list[dict[str, Any]]


def _chat_spaces(env: Any) -> None:
    env.observation_space = spaces.messages.chat()
    env.action_space = spaces.messages.message(roles=("assistant",))


def _assistant_calls(calls: list[dict[str, Any]], *, prefix: str = "call") -> dict[str, Any]:
    tool_calls = [
        {"id": f"{prefix}_{index}", "name": name, "arguments": arguments}
        for index, call in enumerate(calls)
        for name, arguments in call.items()
    ]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def _metadata(task: BfclTask, **extra: Any) -> dict[str, Any]:
    return {"bfcl_category": task.category, "bfcl_id": task.id, "source": f"bfcl-eval {package_version()}", **extra}


class BfclSingleTurnEnv(SingleTurnEnv[Messages, Any]):
    """One single-turn BFCL entry (AST, irrelevance or relevance category)."""

    metadata = {"render_modes": []}

    def __init__(self, task: BfclTask, category: Category) -> None:
        self.task = task
        self.category = category
        self.tools = tool_definitions(task.functions, category.language)
        _chat_spaces(self)

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[Messages, dict[str, Any]]:
        return copy.deepcopy(self.task.question[0]), {"task_id": self.task.id}

    def terminal_observation(self, action: Any) -> Messages:
        return []

    def evaluate(self, action: Any) -> Score:
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        decoded = decode_reply(action)
        kind = self.category.kind
        if kind in ("irrelevance", "relevance"):
            called = decoded.calls is not None and not is_empty_output(decoded.calls)
            right = (not called) if kind == "irrelevance" else called
            if right:
                return Score(
                    1.0,
                    metadata=_metadata(self.task),
                    feedback="No function called, as required."
                    if kind == "irrelevance"
                    else "A function was called, as required.",
                )
            if kind == "irrelevance":
                return Score(
                    0.0,
                    metadata=_metadata(self.task, error_type="irrelevance_error:decoder_success"),
                    feedback="No function fits this request, but the reply called "
                    f"{', '.join(next(iter(call)) for call in decoded.calls or [])}.",
                )
            return Score(
                0.0,
                metadata=_metadata(self.task, error_type="relevance_error:decoder_failed"),
                feedback="A function fits this request, but the reply called none "
                f"({decoded.problem or 'empty call'}).",
            )
        if decoded.calls is None:
            return Score(
                0.0,
                metadata=_metadata(self.task, error_type="ast_decoder:decoder_failed"),
                feedback=f"Expected function calls; {decoded.problem}.",
            )
        if not is_call_format(decoded.calls):
            return Score(
                0.0,
                metadata=_metadata(self.task, error_type="ast_decoder:decoder_wrong_output_format"),
                feedback="Each tool call needs a function name and an object of arguments.",
            )
        try:
            verdict = check_calls(
                self.task.functions, decoded.calls, self.task.ground_truth, self.task.category, self.category.language
            )
        except Exception as error:  # noqa: BLE001 - BFCL's checker raises on some malformed values; that is a wrong answer here
            return Score(
                0.0,
                metadata=_metadata(self.task, error_type="checker_error"),
                feedback=f"The calls could not be checked: {type(error).__name__}: {error}",
            )
        if verdict.valid:
            return Score(1.0, metadata=_metadata(self.task), feedback="The calls match a possible answer.")
        return Score(
            0.0,
            metadata=_metadata(self.task, error_type=verdict.error_type),
            feedback=" ".join(verdict.errors) or verdict.error_type,
        )

    def oracle_action(self) -> dict[str, Any]:
        """The reference reply: possible-answer calls, no call (irrelevance), or any call (relevance)."""
        kind = self.category.kind
        if kind == "irrelevance":
            return {"role": "assistant", "content": "None of the available functions can do this."}
        if kind == "relevance":
            return _assistant_calls([relevance_call(self.task.functions)])
        return _assistant_calls(reference_calls(self.task.functions, self.task.ground_truth, self.category.language))

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def close(self) -> None:
        self._episode_active = False


class BfclMultiTurnEnv(gym.Env[Messages, Any]):
    """One multi-turn BFCL entry over the package's executable backends."""

    metadata = {"render_modes": []}

    def __init__(self, task: BfclTask, category: Category) -> None:
        from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

        self.task = task
        self.category = category
        self.long_context = "long_context" in task.category
        self.max_steps_per_turn = MAXIMUM_STEP_LIMIT
        self._functions = list(task.functions)
        self.tools = tool_definitions(self._functions, category.language)
        self._reference = [[parse_call_string(text) for text in turn] for turn in task.ground_truth]
        _chat_spaces(self)
        self._done = True
        self._oracle_turn_done = False

    # -- episode --------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Messages, dict[str, Any]]:
        super().reset(seed=seed)
        self._functions = list(self.task.functions)
        self.tools = tool_definitions(self._functions, self.category.language)
        self.backends = Backends(self.task.involved_classes, self.task.initial_config, long_context=self.long_context)
        self.reference_backends = Backends(
            self.task.involved_classes, self.task.initial_config, long_context=self.long_context
        )
        self.turn = 0
        self._steps_in_turn = 0
        self._calls_this_turn = 0
        self._results_so_far: list[str] = []
        self._decoded: list[list[list[str]]] = [[]]
        self._failure: dict[str, Any] | None = None
        self._done = False
        self._oracle_turn_done = False
        return self._turn_messages(0), {"task_id": self.task.id, "turns": len(self.task.question)}

    def _turn_messages(self, turn: int) -> Messages:
        if turn in self.task.held_out:
            from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING

            added = self.task.held_out[turn]
            self._functions.extend(added)
            self.tools = tool_definitions(self._functions, self.category.language)
            new_tools = tool_definitions(added, self.category.language)
            # BFCL updates the tool list of FC models; the text also lists the new tools, for
            # policies that read the tool list once per episode.
            text = DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
                functions=json.dumps([tool["function"] for tool in new_tools])
            )
            return [{"role": "user", "content": text}]
        return copy.deepcopy(self.task.question[turn])

    def step(self, action: Any) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        decoded = decode_reply(action)
        # BFCL's harness ends the turn on a reply that does not decode to calls with object
        # arguments (plain text, bad JSON, non-object arguments) and runs none of its calls.
        if not decoded.calls or not all(
            type(arguments) is dict for call in decoded.calls for arguments in call.values()
        ):
            observations, reward, terminated, truncated, info = self._end_turn()
            # Answer each call the reply did make, so the chat stays well formed for chat APIs.
            return (
                _unrun_calls(action, decoded.problem or "the arguments must be a JSON object") + observations,
                reward,
                terminated,
                truncated,
                info,
            )
        observations: Messages = []
        rendered: list[str] = []
        for index, call in enumerate(decoded.calls):
            name, arguments = next(iter(call.items()))
            result = self.backends.execute(name, (), arguments)
            rendered.append(render_call(name, arguments))
            self._results_so_far.append(result)
            observations.append({"role": "tool", "tool_call_id": _call_id(action, index), "content": result})
        self._decoded[self.turn].append(rendered)
        self._calls_this_turn += 1
        self._steps_in_turn += 1
        if self._steps_in_turn > self.max_steps_per_turn:
            self._fail(
                "multi_turn:force_terminated",
                f"More than {self.max_steps_per_turn} tool-calling replies in turn {self.turn}: BFCL "
                "force-terminates the entry.",
            )
            return self._finish(observations, truncated=False)
        return observations, 0.0, False, False, self._info()

    def _end_turn(self) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        reference = self._reference[self.turn] if self.turn < len(self._reference) else []
        reference_results = [
            self.reference_backends.execute(name, positional, keywords) for name, positional, keywords in reference
        ]
        if self._failure is None and reference:
            self._check_turn(reference_results)
        self.turn += 1
        self._steps_in_turn = 0
        self._calls_this_turn = 0
        self._oracle_turn_done = False
        if self.turn >= len(self.task.question):
            return self._finish([], truncated=False)
        self._decoded.append([])
        return self._turn_messages(self.turn), 0.0, False, False, self._info()

    def _check_turn(self, reference_results: list[str]) -> None:
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import response_checker, state_checker

        if self._calls_this_turn == 0:
            self._fail("multi_turn:empty_turn_model_response", f"Model response list is empty for turn {self.turn}")
            return
        state = state_checker(self.backends.instances, self.reference_backends.instances)
        if not state["valid"]:
            differences = state.get("details", {}).get("differences", {})
            self._fail(
                state["error_type"],
                f"turn {self.turn}: {state['error_message']} Differing attributes: {', '.join(differences) or '-'}.",
            )
            return
        response = response_checker(self._results_so_far, reference_results, self.turn)
        if not response["valid"]:
            missing = response.get("details", {}).get("missing_items", [])
            self._fail(
                response["error_type"],
                f"turn {self.turn}: {response['error_message']} Missing: {json.dumps(missing)[:500]}",
            )

    def _fail(self, error_type: str, message: str) -> None:
        if self._failure is None:
            self._failure = {"error_type": error_type, "message": message, "turn": self.turn}

    def _finish(self, observations: Messages, *, truncated: bool) -> tuple[Messages, float, bool, bool, dict[str, Any]]:
        self._done = True
        if self._failure is None:
            score = Score(
                1.0,
                metadata=_metadata(self.task, turns=len(self.task.question)),
                feedback="Every turn left the backends in the reference state with the reference results.",
            )
        else:
            score = Score(
                0.0,
                metadata=_metadata(
                    self.task, error_type=self._failure["error_type"], failed_turn=self._failure["turn"]
                ),
                feedback=self._failure["message"],
            )
        info = self._info()
        info.update(score.as_info())
        info["decoded_calls"] = self._decoded
        return observations, score.value, True, truncated, info

    def _info(self) -> dict[str, Any]:
        return {"turn": self.turn, "steps_in_turn": self._steps_in_turn}

    # -- reference solution ---------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """This turn's reference calls in one reply, then a reply without calls to end the turn."""
        reference = self._reference[self.turn] if self.turn < len(self._reference) else []
        if self._oracle_turn_done or not reference:
            self._oracle_turn_done = False
            return {"role": "assistant", "content": "Done."}
        self._oracle_turn_done = True
        calls = []
        for name, positional, keywords in reference:
            arguments = dict(keywords)
            if positional:
                # Reference calls sometimes pass arguments by position; name them for a tool call.
                import inspect

                parameters = list(inspect.signature(self.backends.methods[name]).parameters)
                arguments = {**dict(zip(parameters, positional, strict=False)), **arguments}
            calls.append({name: arguments})
        return _assistant_calls(calls, prefix=f"turn{self.turn}")

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def close(self) -> None:
        self._done = True
        self.__dict__.pop("backends", None)
        self.__dict__.pop("reference_backends", None)


def _unrun_calls(action: Any, problem: str) -> Messages:
    """Tool messages saying the calls of a reply that did not decode were not run."""
    calls = action.get("tool_calls") if isinstance(action, dict) else None
    if not isinstance(calls, list):
        return []
    text = f"Not executed: {problem}. The turn ended (BFCL ends a turn on a reply it cannot decode)."
    return [{"role": "tool", "tool_call_id": _call_id(action, index), "content": text} for index in range(len(calls))]


def _call_id(action: Any, index: int) -> str:
    try:
        call_id = action["tool_calls"][index].get("id")
    except (KeyError, IndexError, TypeError, AttributeError):
        call_id = None
    return call_id if isinstance(call_id, str) else f"call_{index}"


def make_env(task: BfclTask | None = None, *, env_id: str, **kwargs: Any) -> BfclSingleTurnEnv | BfclMultiTurnEnv:
    """The env factory of every ``bfcl/*-v0`` id (``env_id`` comes from the spec's kwargs)."""
    if kwargs:
        raise ConfigError(f"{env_id} takes no options; got {', '.join(sorted(kwargs))}")
    category = category_for_env(env_id)
    if task is None:
        task = tasks_for_env(env_id)[0]
    if category.kind == "multi_turn":
        return BfclMultiTurnEnv(task, category)
    return BfclSingleTurnEnv(task, category)
