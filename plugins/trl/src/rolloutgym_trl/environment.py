"""``environment_factory`` for TRL's ``GRPOTrainer``: a registered tool env as a class of tools.

``GRPOTrainer(environment_factory=factory, train_dataset=factory.train_dataset,
reward_funcs=factory.reward_funcs, ...)`` where ``factory = environment_factory("toy/guess-v0")``.
TRL creates instances with ``factory()``, calls ``reset(**example)`` before each episode
and exposes the instance's public methods as tools (their names, docstrings and type hints
become the tool schemas). Here each method is generated from the env's tool space: same
name, description, argument names, JSON types, required/optional and enums. Calling one
steps the rolloutgym env with that tool call and returns the tool's reply. When the model
answers without a tool call, the reward function sends that final answer to the env (so
envs that grade the final message work), then reads the env's own Score.

Envs without tools (text answers) cannot be driven this way: use
:class:`rolloutgym_trl.RolloutFunction` (``rollout_func``) for them.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping
from typing import Any, Literal, Optional

from rolloutgym_protocol import Score
from rolloutgym_protocol.errors import ConfigError

__all__ = ["EnvironmentFactory", "ToolEnvironment", "environment_factory", "tool_method"]

_RESERVED = {"reset", "get_reward"}
_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def _hint(schema: Mapping[str, Any]) -> Any:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "array":
        items = schema.get("items")
        return list[_hint(items)] if isinstance(items, Mapping) and items.get("type") else list
    if kind in _JSON_TYPES:
        return _JSON_TYPES[kind]
    return str  # a schema without a plain type: the model writes it as a string


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def tool_method(tool: Mapping[str, Any]) -> Any:
    """A method for one OpenAI-style tool definition: its signature and Google docstring
    reproduce the tool's name, description and argument schema for ``get_json_schema``."""
    function = tool.get("function", tool)
    name = str(function.get("name", ""))
    if not name.isidentifier() or name.startswith("_") or name in _RESERVED:
        raise ConfigError(
            f"tool {name!r} cannot be a Python method name (TRL exposes tools as methods); "
            "train this env with rollout_func instead (rolloutgym train grpo ENV --mode rollout_func)"
        )
    parameters = function.get("parameters") or {}
    properties: Mapping[str, Any] = parameters.get("properties") or {}
    required = set(parameters.get("required") or ())
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    argument_lines = []
    for argument in sorted(properties, key=lambda key: key not in required):  # required first
        if not argument.isidentifier():
            raise ConfigError(
                f"tool {name!r} has an argument {argument!r} that is not a Python identifier; "
                "train this env with rollout_func instead (rolloutgym train grpo ENV --mode rollout_func)"
            )
        schema = properties[argument] if isinstance(properties[argument], Mapping) else {}
        hint = _hint(schema)
        if argument not in required:
            hint = Optional[hint]  # noqa: UP045 - typing form, read by get_type_hints
        annotations[argument] = hint
        default = inspect.Parameter.empty if argument in required else None
        signature.append(
            inspect.Parameter(argument, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=hint)
        )
        argument_lines.append(f"    {argument}: {_one_line(schema.get('description')) or argument.replace('_', ' ')}")
    annotations["return"] = str

    def method(self: ToolEnvironment, *args: Any, **kwargs: Any) -> str:
        bound = inspect.Signature(signature[1:]).bind(*args, **kwargs)
        arguments = {key: value for key, value in bound.arguments.items() if value is not None or key in required}
        return self._call_tool(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(signature, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    description = _one_line(function.get("description")) or f"Call the {name} tool."
    doc = description
    if argument_lines:
        doc += "\n\nArgs:\n" + "\n".join(argument_lines)
    method.__doc__ = doc + "\n\nReturns:\n    The tool's reply."
    return method


class ToolEnvironment:
    """Base of the generated classes: one rolloutgym env episode per ``reset``.

    Attributes:
        score: the env's Score once the episode has ended (``None`` before).
        total_reward: the sum of the env's step rewards so far.
        done: the env ended the episode.
    """

    env_id: str = ""
    env_kwargs: Mapping[str, Any] = {}

    def __init__(self) -> None:
        self.environment: Any = None
        self.score: Score | None = None
        self.total_reward = 0.0
        self.done = False
        self._calls = itertools.count()

    def reset(self, **example: Any) -> str | None:
        """Start the episode of ``example["task_id"]`` (a row of the factory's ``train_dataset``)."""
        import rolloutgym as rg

        task_id = example.get("task_id")
        if task_id is None:
            raise ConfigError(
                "the example has no 'task_id'; use the train_dataset of rolloutgym_trl.environment_factory"
            )
        self._close()
        self.environment = rg.as_sync(rg.make(self.env_id, task=task_id, **dict(self.env_kwargs)))
        self.environment.reset(seed=0)
        self.score, self.total_reward, self.done = None, 0.0, False
        self._calls = itertools.count()
        return None  # the prompt column already holds the env's first observation

    def _step(self, action: Any) -> list[Any]:
        if self.environment is None:
            raise ConfigError("call reset(**example) before using the environment's tools")
        observation, reward, terminated, truncated, info = self.environment.step(action)
        self.total_reward += float(reward)
        if terminated or truncated:
            self.done = True
            self.score = Score.from_info(info) or Score(self.total_reward)
        return observation if isinstance(observation, list) else [observation]

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        from rolloutgym.llm import content_text

        if self.done:
            return "error: the episode is over; answer without calling tools"
        call = {"id": f"call_{next(self._calls)}", "name": name, "arguments": arguments}
        replies = self._step({"role": "assistant", "content": "", "tool_calls": [call]})
        texts = [content_text(reply.get("content")) if isinstance(reply, Mapping) else str(reply) for reply in replies]
        return "\n".join(text for text in texts if text)

    def _finish(self, answer: str) -> Score:
        """Send the model's final answer (a reply without tool calls) unless the episode already
        ended; return the Score (the summed step rewards when the env never ended it)."""
        if not self.done and self.environment is not None:
            self._step({"role": "assistant", "content": answer})
        return self.score if self.score is not None else Score(self.total_reward)

    def _close(self) -> None:
        if self.environment is not None:
            self.environment.close()
            self.environment = None


def _final_text(completion: Any) -> str:
    from rolloutgym.llm import content_text

    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion or [])):
        if isinstance(message, Mapping) and message.get("role") == "assistant" and not message.get("tool_calls"):
            return content_text(message.get("content"))
    return ""


class EnvironmentFactory:
    """What ``GRPOTrainer(environment_factory=...)`` expects, for one registered tool env.

    Calling it returns a new instance of :attr:`environment_class`. :attr:`train_dataset`
    and :attr:`reward_funcs` go to the same trainer.

    Attributes:
        env_id: the env.
        tools: the env's OpenAI-style tool definitions.
        environment_class: the generated :class:`ToolEnvironment` subclass.
    """

    def __init__(
        self, env_id: str, *, split: str | None = "train", env_kwargs: Mapping[str, Any] | None = None
    ) -> None:
        import rolloutgym as rg
        from rolloutgym.llm import env_tools

        from .datasets import task_rows

        registry = rg.get_registry()
        self.env_id = registry.resolve_env(env_id).spec.id
        self.split = split
        self.env_kwargs = dict(env_kwargs or {})
        probe = rg.as_sync(registry.make(self.env_id, **self.env_kwargs))
        try:
            self.tools = env_tools(probe)
        finally:
            probe.close()
        if not self.tools:
            raise ConfigError(
                f"environment '{self.env_id}' has no tool space (its actions are text or messages without tools), "
                "so environment_factory has no methods to expose; use rollout_func instead: "
                "rolloutgym_trl.RolloutFunction with reward_funcs=[rolloutgym_trl.env_reward] "
                f"(rolloutgym train grpo {self.env_id} --mode rollout_func)"
            )
        namespace: dict[str, Any] = {
            "env_id": self.env_id,
            "env_kwargs": self.env_kwargs,
            "__doc__": f"Tools of {self.env_id}.",
        }
        for tool in self.tools:
            method = tool_method(tool)
            namespace[method.__name__] = method
        class_name = "".join(part.capitalize() for part in self.env_id.replace("/", "-").replace(".", "-").split("-"))
        self.environment_class: type[ToolEnvironment] = type(class_name + "Tools", (ToolEnvironment,), namespace)
        self._rows = task_rows(self.env_id, split=split, env_kwargs=self.env_kwargs)
        self._dataset: Any = None

    def __call__(self) -> ToolEnvironment:
        return self.environment_class()

    @property
    def train_dataset(self) -> Any:
        """A ``datasets.Dataset``: ``prompt`` (the env's first messages), ``env_id``, ``task_id``."""
        if self._dataset is None:
            from datasets import Dataset

            self._dataset = Dataset.from_list(self._rows)
        return self._dataset

    @property
    def reward_funcs(self) -> list[Any]:
        """``[env_score]``: the env's Score value per episode (its components are logged as
        ``rolloutgym/<component>`` metrics)."""

        def env_score(
            prompts: list[Any], completions: list[Any], environments: list[Any] | None = None, **kwargs: Any
        ) -> list[float]:
            if environments is None:
                raise ConfigError("env_score needs the trainer's environments: pass environment_factory to GRPOTrainer")
            scores = [
                environment._finish(_final_text(completion))
                for environment, completion in zip(environments, completions, strict=True)
            ]
            log_metric = kwargs.get("log_metric")
            if callable(log_metric) and scores:
                log_metric("rolloutgym/pass_rate", sum(score.value >= 1.0 for score in scores) / len(scores))
                names = sorted({name for score in scores for name in score.components})
                for name in names:
                    values = [score.components[name].value for score in scores if name in score.components]
                    log_metric(f"rolloutgym/{name}", sum(values) / len(values))
            for environment in environments:
                environment._close()
            return [float(score.value) for score in scores]

        return [env_score]


def environment_factory(
    env_id: str, *, split: str | None = "train", env_kwargs: Mapping[str, Any] | None = None
) -> EnvironmentFactory:
    """The ``environment_factory`` (with ``train_dataset`` and ``reward_funcs``) of a tool env.

    Raises:
        ConfigError: the env has no tools (use :class:`~rolloutgym_trl.RolloutFunction`), or a
            tool name or argument is not a Python identifier.
    """
    return EnvironmentFactory(env_id, split=split, env_kwargs=env_kwargs)
