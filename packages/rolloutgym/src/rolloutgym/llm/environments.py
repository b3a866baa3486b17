"""NeMo-RL-style batched environments, both ways.

The seed's trainers talk to environments through a *batched* interface:
``env.step(message_log_batch, metadata) -> EnvironmentReturn``, one call for every sample
routed to that env, with each sample's state carried in its ``metadata``
(``extra_env_info``) from one turn to the next. rolloutgym envs are per-episode Gymnasium
envs. This module adapts each to the other:

* :class:`EnvironmentInterface` and :class:`EnvironmentReturn` follow NeMo-RL's documented
  interface (``nemo_rl.environments.interfaces``: ``step``, ``global_post_process_and_metrics``;
  the return's ``observations, metadata, next_stop_strings, rewards, terminateds, answers``).
  NeMo-RL's package is heavy (torch, Ray, Megatron), so these are stand-ins with the same
  signatures, not imports of it.
* A NeMo-style env in ``task_to_env`` (anything with ``step`` and
  ``global_post_process_and_metrics``, a Ray actor handle included) runs in rolloutgym's
  loops: each sample becomes an :class:`InterfaceEnv` episode over its ``message_log``, and
  the steps of samples that arrive together go to the env in one batched call.
  :func:`batched_env_factory` makes one a registered env (``EnvSpec`` entry point), so it
  runs under ``rolloutgym run`` and ``rolloutgym serve`` like any env.
* :class:`RolloutgymEnvironment` is any rolloutgym env (an id or a factory) as an
  ``EnvironmentInterface``, for a NeMo-RL trainer's ``task_to_env``.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from rolloutgym_protocol import AsyncEnv, spaces
from rolloutgym_protocol.errors import ConfigError

from ._seed_rules import torch_or_none
from .messages import content_text, observation_messages
from .parsing import parse_reply

__all__ = [
    "EnvironmentInterface",
    "EnvironmentReturn",
    "InterfaceEnv",
    "RolloutgymEnvironment",
    "batched_env_factory",
    "is_environment_interface",
]


class EnvironmentReturn(NamedTuple):
    """What a batched ``step`` returns, one entry per sample in the batch (NeMo-RL's shape).

    Attributes:
        observations: the next message per sample (``{"role": "environment", "content": ...}``).
        metadata: each sample's ``extra_env_info`` for its next turn.
        next_stop_strings: stop strings for each sample's next generation (or ``None``).
        rewards: the reward of this turn per sample (a list or a tensor).
        terminateds: whether each sample's episode ended (a list or a tensor).
        answers: the extracted answer per sample, when the env gives one.
    """

    observations: list[dict[str, Any]]
    metadata: list[Any]
    next_stop_strings: list[list[str] | None]
    rewards: Any
    terminateds: Any
    answers: list[str | None] | None = None


class EnvironmentInterface(abc.ABC):
    """A batched environment with NeMo-RL's documented signature (a stand-in, see the module)."""

    @abc.abstractmethod
    def step(self, message_log_batch: list[list[dict[str, Any]]], metadata: list[Any]) -> EnvironmentReturn:
        """Answer the last assistant message of every sample in the batch."""

    def global_post_process_and_metrics(self, batch: Any) -> tuple[Any, dict[str, Any]]:
        """Post-process a finished batch and return ``(batch, metrics)``."""
        return batch, {}

    def shutdown(self) -> None:  # noqa: B027 - optional hook, nothing to do by default
        """Release what the env holds."""


def is_environment_interface(value: Any) -> bool:
    """``value`` is a batched env instance (or Ray actor handle) with NeMo-RL's interface."""
    return (
        not isinstance(value, type)
        and hasattr(value, "step")
        and hasattr(value, "global_post_process_and_metrics")
        and not hasattr(value, "reset")
    )


def _column(values: Any, index: int) -> Any:
    value = values[index]
    return value.item() if hasattr(value, "item") else value


async def _call_step(interface: Any, logs: list[list[dict[str, Any]]], metadata: list[Any]) -> EnvironmentReturn:
    remote = getattr(interface.step, "remote", None)
    if callable(remote):  # a Ray actor handle: step.remote(...) gives an ObjectRef
        import ray

        return await asyncio.to_thread(ray.get, remote(logs, metadata))
    if inspect.iscoroutinefunction(interface.step):
        return await interface.step(logs, metadata)
    result = await asyncio.to_thread(interface.step, logs, metadata)
    return await result if inspect.isawaitable(result) else result


class _StepBatcher:
    """Sends the steps of samples that arrive in the same loop turn to the env in one call.

    ``interface`` may be a zero-argument callable that builds the env (called once, at the
    first step). Steps are grouped per event loop, so episodes in different loops never share a call.
    """

    def __init__(self, interface: Any, *, lazy: bool = False) -> None:
        self._interface = interface
        self._lazy = lazy
        self.pending: dict[asyncio.AbstractEventLoop, list[tuple[Any, Any, asyncio.Future[tuple[Any, ...]]]]] = {}
        self.calls: list[int] = []
        self._flushes: set[asyncio.Task[None]] = set()

    @property
    def interface(self) -> Any:
        if self._lazy:
            built = self._interface()
            if not is_environment_interface(built):
                raise ConfigError(
                    f"the batched env factory returned a {type(built).__name__}, not an EnvironmentInterface "
                    "(an object with step(message_log_batch, metadata) and global_post_process_and_metrics)"
                )
            self._interface, self._lazy = built, False
        return self._interface

    async def step(self, log: list[dict[str, Any]], metadata: Any) -> tuple[Any, ...]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Any, ...]] = loop.create_future()
        items = self.pending.setdefault(loop, [])
        if not items:
            loop.call_soon(self._start_flush, loop)
        items.append((log, metadata, future))
        return await future

    def _start_flush(self, loop: asyncio.AbstractEventLoop) -> None:
        task = loop.create_task(self._flush(self.pending.pop(loop, [])))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self, items: list[tuple[Any, Any, asyncio.Future[tuple[Any, ...]]]]) -> None:
        self.calls.append(len(items))
        try:
            result = await _call_step(self.interface, [item[0] for item in items], [item[1] for item in items])
            if len(result.observations) != len(items):
                raise ConfigError(
                    f"{type(self.interface).__name__}.step returned {len(result.observations)} observations "
                    f"for {len(items)} samples"
                )
        except Exception as exc:
            for *_, future in items:
                future.set_exception(exc)
            return
        for index, (*_, future) in enumerate(items):
            answer = result.answers[index] if result.answers is not None else None
            future.set_result(
                (
                    result.observations[index],
                    result.metadata[index],
                    result.next_stop_strings[index],
                    float(_column(result.rewards, index)),
                    bool(_column(result.terminateds, index)),
                    answer,
                )
            )


def _chat_role(role: Any) -> str:
    return "user" if role in (None, "environment") else str(role)


class InterfaceEnv(AsyncEnv[list[dict[str, Any]], dict[str, Any]]):
    """One sample of a NeMo-style batched env as a rolloutgym episode.

    ``reset`` shows the sample's ``message_log`` (roles and contents; ``environment``
    messages are shown to the model as ``user`` turns); each ``step`` appends the assistant
    message to the log, sends it with the sample's ``extra_env_info`` through the shared
    batcher, and returns the env's observation, reward and termination. ``extra_env_info``
    and ``next_stop_strings`` are carried to the next turn (``extra_env_info`` is also in each
    step's ``info``); the episode's message log is :attr:`log`.
    When the policy ends the episode (``max_rollout_turns`` spent, context full) the env is
    not stepped with the empty answer: the episode is truncated, as the seed's loop stops.
    """

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, batcher: _StepBatcher, sample: Mapping[str, Any]) -> None:
        self.batcher = batcher
        self.sample = sample
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.log: list[dict[str, Any]] = []
        self.env_info: Any = None
        self.next_stop_strings: list[str] | None = None
        self.ended_by: str | None = None

    def policy_ended(self, reason: str) -> None:
        """The policy ends the episode (turns or context spent): the next step does not reach the env."""
        self.ended_by = reason

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        await super().reset(seed=seed, options=options)
        log = self.sample.get("message_log")
        if not isinstance(log, Sequence) or isinstance(log, str) or not log:
            raise ConfigError("a sample routed to a batched env needs a non-empty 'message_log' list of messages")
        self.log = [dict(message) for message in log]
        self.env_info = self.sample.get("extra_env_info")
        self.next_stop_strings = self.sample.get("stop_strings")
        shown = [{"role": _chat_role(m.get("role")), "content": content_text(m.get("content"))} for m in self.log]
        return shown, {}

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.ended_by is not None:  # as in the seed: no env step for a turn the model never took
            return [], 0.0, False, True, {"extra_env_info": self.env_info}
        content = action.get("content", "") if isinstance(action, Mapping) else str(action)
        self.log.append({"role": "assistant", "content": content_text(content)})
        observation, metadata, stops, reward, terminated, answer = await self.batcher.step(
            list(self.log), self.env_info
        )
        self.env_info, self.next_stop_strings = metadata, stops
        message = dict(observation) if isinstance(observation, Mapping) else {"content": str(observation)}
        self.log.append(message)
        info: dict[str, Any] = {"extra_env_info": metadata}
        if answer is not None:
            info["answer"] = answer
        shown = [{"role": _chat_role(message.get("role")), "content": content_text(message.get("content", ""))}]
        return shown, reward, terminated, False, info

    async def close(self) -> None:
        return None


def interface_factory(interface: Any, *, lazy: bool = False) -> Callable[[Mapping[str, Any]], InterfaceEnv]:
    """``factory(sample) -> env`` for ``task_to_env``: every sample shares one step batcher."""
    batcher = _StepBatcher(interface, lazy=lazy)

    def make(sample: Mapping[str, Any]) -> InterfaceEnv:
        return InterfaceEnv(batcher, sample)

    make.batcher = batcher  # type: ignore[attr-defined]
    return make


def batched_env_factory(interface: Any) -> Callable[..., InterfaceEnv]:
    """A NeMo-style batched env as a registered env's factory, for ``rolloutgym run`` and ``serve``.

    Name the result in an :class:`~rolloutgym.EnvSpec` ``entry_point`` and the samples (dicts
    with ``message_log``, optional ``extra_env_info`` and ``stop_strings``, an ``id`` if you
    want task ids) in its ``tasks`` loader; every episode built from it is an
    :class:`InterfaceEnv` over its sample, and the steps of episodes that run concurrently
    (``--concurrency``, a server's sessions) go to the env in one batched ``step`` call::

        # my_envs.py
        math_env = batched_env_factory(MathEnvironment)     # the class or factory: built at the first step
        def samples(): return [{"id": "q0", "message_log": [...], "extra_env_info": {...}}, ...]
        # plugin: EnvSpec(id="nemo/math-v0", entry_point="my_envs:math_env", tasks="my_envs:samples")

    Args:
        interface: an ``EnvironmentInterface`` instance (or Ray actor handle), or a
            zero-argument callable that builds one (called once, when the first episode steps).
    """
    lazy = not is_environment_interface(interface)
    if lazy and not callable(interface):
        raise ConfigError(
            "batched_env_factory needs an EnvironmentInterface or a callable that builds one, "
            f"got {type(interface).__name__}"
        )
    make = interface_factory(interface, lazy=lazy)

    def factory(task: Mapping[str, Any] | None = None, **kwargs: Any) -> InterfaceEnv:
        if not isinstance(task, Mapping):
            raise ConfigError(
                "a batched env's task is a sample dict with 'message_log' (and 'extra_env_info'); give the env a "
                f"tasks loader returning such dicts (EnvSpec(tasks='module:loader')), got {type(task).__name__}"
            )
        if kwargs:
            raise ConfigError(f"a batched env takes no factory arguments, got {', '.join(sorted(kwargs))}")
        return make(task)

    factory.batcher = make.batcher  # type: ignore[attr-defined]
    return factory


class RolloutgymEnvironment(EnvironmentInterface):
    """Any rolloutgym env as a NeMo-RL ``EnvironmentInterface``.

    Build each sample with :meth:`initial_sample` (its ``message_log`` is the env's first
    observation, its ``extra_env_info`` names the live episode). ``step`` parses each
    sample's last assistant message into the env's action (text, or Hermes / fenced tool
    calls), steps that sample's env and returns the next observation as one
    ``environment`` message; ``rewards`` and ``terminateds`` are torch tensors, as NeMo-RL's
    envs return them, when torch is installed. Episodes are closed when they end and by
    :meth:`shutdown`. In a NeMo-RL trainer, which calls ``env.step.remote(...)``, make it a Ray
    actor: ``ray.remote(RolloutgymEnvironment).remote("sql/shop-v0")`` (its episodes then live
    in the actor; build samples with ``actor.initial_sample.remote(...)``).

    Args:
        env: a registered env id, or ``factory(task) -> env`` (sync envs).
        registry: the registry for ids (default: the global one).
    """

    def __init__(self, env: str | Callable[[Any], Any], *, registry: Any = None) -> None:
        if isinstance(env, str):
            if registry is None:
                from ..registry import get_registry

                registry = get_registry()
            env_id = registry.resolve_env(env).spec.id
            self.make: Callable[[Any], Any] = lambda task: registry.make(env_id, task=task)
        elif callable(env):
            self.make = env
        else:
            raise ConfigError(f"env must be a registered env id or a factory(task) -> env, got {type(env).__name__}")
        self.live: dict[int, Any] = {}
        self._ids = itertools.count()

    def initial_sample(self, task: Any, *, task_name: str, seed: int | None = None, **fields: Any) -> dict[str, Any]:
        """A sample (DatumSpec-shaped dict) for ``task``: its env is made and reset now."""
        environment = self.make(task)
        observation, _ = environment.reset(seed=seed)
        key = next(self._ids)
        self.live[key] = environment
        log = [
            {"role": m["role"], "content": content_text(m.get("content"))} for m in observation_messages(observation)
        ]
        stops = getattr(environment, "next_stop_strings", None)
        return {
            "message_log": log,
            "extra_env_info": {"episode": key},
            "task_name": task_name,
            "stop_strings": stops,
            **fields,
        }

    def _step_one(self, log: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> tuple[Any, ...]:
        environment = self.live.get(int(info["episode"])) if isinstance(info, Mapping) else None
        if environment is None:
            raise ConfigError(f"no live episode for extra_env_info {info!r}: build samples with initial_sample()")
        text = content_text(log[-1].get("content")) if log else ""
        text_action = isinstance(environment.action_space, spaces.TextSpace)
        tools = [tool.get("function", tool).get("name") for tool in getattr(environment, "tools", None) or ()]
        parsed = parse_reply(text, text_action=text_action, tool_names=frozenset(tools) if tools else None, fenced=True)
        observation, reward, terminated, truncated, _ = environment.step(parsed.action)
        done = bool(terminated or truncated)
        if done:
            environment.close()
            del self.live[int(info["episode"])]
        content = (
            "\n".join(content_text(m.get("content")) for m in observation_messages(observation)) if observation else ""
        )
        stops = None if done else getattr(environment, "next_stop_strings", None)
        return {"role": "environment", "content": content}, dict(info), stops, float(reward), done

    def step(self, message_log_batch: list[list[dict[str, Any]]], metadata: list[Any]) -> EnvironmentReturn:
        results = [self._step_one(log, info) for log, info in zip(message_log_batch, metadata, strict=True)]
        observations, infos, stops, rewards, done = (
            [list(column) for column in zip(*results, strict=True)] if results else [[], [], [], [], []]
        )
        torch = torch_or_none()
        if torch is None:
            return EnvironmentReturn(observations, infos, stops, rewards, done)
        # NeMo-RL's loop adds the rewards to a tensor and masks with the terminateds: tensors, as its envs give
        return EnvironmentReturn(
            observations, infos, stops, torch.tensor(rewards, dtype=torch.float32), torch.tensor(done, dtype=torch.bool)
        )

    def shutdown(self) -> None:
        for environment in self.live.values():
            environment.close()
        self.live.clear()
