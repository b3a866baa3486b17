"""The built-in policies: ``oracle``, ``null``, ``random``, ``chaos``, ``human`` and ``replay:RUN_FILE``.

``oracle``, ``null``, ``chaos`` and ``replay`` are environment-aware: the rollout engine calls
``for_env(env)`` at the start of each episode.
"""

from __future__ import annotations

import copy
import json
import sys
import zlib
from collections import defaultdict, deque
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np
from rolloutgym_protocol import find_attribute, spaces
from rolloutgym_protocol.display import json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import ConfigError, PolicyError

from ._chaos import ChaosPolicy

__all__ = [
    "ChaosPolicy",
    "HumanPolicy",
    "NullPolicy",
    "OraclePolicy",
    "RandomPolicy",
    "ReplayPolicy",
    "default_null_action",
    "make_chaos",
    "make_human",
    "make_null",
    "make_oracle",
    "make_random",
    "make_replay",
]


def _env_name(environment: Any) -> str:
    return (
        getattr(environment, "rolloutgym_env_id", None) or type(getattr(environment, "unwrapped", environment)).__name__
    )


class OraclePolicy:
    """Plays the environment's reference solution through its ``oracle_action()`` method."""

    def for_env(self, environment: Any) -> Any:
        method = find_attribute(environment, "oracle_action")
        if method is None:
            raise PolicyError(
                f"environment {_env_name(environment)} has no reference solution: it does not define "
                "oracle_action(); the 'oracle' policy cannot play it"
            )

        def act(observation: Any) -> Any:
            return method()

        return act

    def __call__(self, observation: Any) -> Any:
        raise PolicyError("the oracle policy needs its environment: run it through rollout()/arollout()")


def default_null_action(action_space: gym.Space[Any]) -> Any:
    """The 'do nothing' action for common LLM action spaces."""
    if isinstance(action_space, (spaces.TextSpace, gym.spaces.Text)):
        return ""
    if isinstance(action_space, spaces.MessageSpace):
        return {"role": "assistant", "content": ""}
    raise PolicyError(f"no null action for action space {action_space!r}; give the environment a null_action() method")


class NullPolicy:
    """Does nothing: the env's ``null_action()``, else an empty answer with no tool calls."""

    def for_env(self, environment: Any) -> Any:
        method = find_attribute(environment, "null_action")
        if method is not None:
            return lambda observation: method()
        action = default_null_action(environment.action_space)
        return lambda observation: action

    def __call__(self, observation: Any) -> Any:
        raise PolicyError("the null policy needs its environment: run it through rollout()/arollout()")


class RandomPolicy:
    """Samples the environment's action space, seeded per episode from ``seed``.

    An episode's seed comes from ``seed``, the env's task id and how many episodes of that
    task this policy has started, never from the order in which a concurrent run happens to
    start episodes of different tasks: a seeded run scores the same on a busy machine.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._episodes: dict[str | None, int] = {}

    def for_env(self, environment: Any) -> Any:
        # A copy: envs of one task may share one space object, and concurrent episodes
        # sampling (and seeding) the same generator would draw each other's actions.
        space = copy.deepcopy(environment.action_space)
        task = getattr(environment, "rolloutgym_task_id", None)
        count = self._episodes.get(task, 0)
        self._episodes[task] = count + 1
        if self.seed is not None:
            space.seed(_episode_seed(self.seed, task, count))
        return lambda observation: space.sample()


def _episode_seed(seed: int, task: str | None, count: int) -> int:
    """``seed + count`` for an env without a task id; else mixed with the task id (stable across runs)."""
    if task is None:
        return seed + count
    entropy = [seed % 2**32, zlib.crc32(str(task).encode("utf-8")), count]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def _render_observation(observation: Any, out: TextIO) -> None:
    if isinstance(observation, list) and all(isinstance(item, dict) and "role" in item for item in observation):
        for message in observation:
            content = message.get("content")
            if not isinstance(content, str):
                content = json_text(content, ensure_ascii=True)
            out.write(f"[{safe_str(message['role'])}] {content}\n")
    elif isinstance(observation, str):
        out.write(observation + "\n")
    else:
        out.write(json_text(observation, default=safe_repr, indent=2, ensure_ascii=True) + "\n")


_PLAY_HELP = """commands:
  /call NAME {json arguments}   call a tool (tools: {tools})
  /help                         this list
  /quit                         stop the episode
  //text                        answer with text that starts with a slash
anything else is your answer (or the action, as JSON, when the env takes no text)
"""


def _player_command(line: str, tools: list[Any], out: TextIO) -> bool:
    """Handle a ``/`` command of ``play`` that is not an action; True when the line was one."""
    word = line.strip().split(" ", 1)[0]
    if not word.startswith("/") or word.startswith("//") or word == "/call":
        return False
    if word in ("/help", "/?", "/h"):
        out.write(_PLAY_HELP.replace("{tools}", ", ".join(map(str, tools)) or "none"))
        return True
    if word in ("/quit", "/exit", "/q"):
        raise EOFError("the player quit")
    out.write(f"error: unknown command {word}; /help lists the commands (type //{line[1:]} to send it as text)\n")
    return True


class HumanPolicy:
    """You play at the terminal.

    For chat environments type a reply, or call a tool with
    ``/call NAME {"arg": value}``; for text actions type the answer; otherwise type
    the action as JSON. ``/help`` lists the commands and ``/quit`` stops; they are never
    sent to the env as an answer (type ``//`` to start an answer with a slash).
    """

    def __init__(self, input_stream: TextIO | None = None, output_stream: TextIO | None = None) -> None:
        self.input_stream = input_stream or sys.stdin
        self.output_stream = output_stream or sys.stdout

    def for_env(self, environment: Any) -> Any:
        space = environment.action_space
        tools = find_attribute(environment, "tools") or []
        if tools and not isinstance(tools, list):
            tools = []
        names = [tool.get("function", tool).get("name") for tool in tools if isinstance(tool, dict)]
        out = self.output_stream
        if names:
            out.write(
                f"tools: {', '.join(names)}  (call one with /call NAME {{json arguments}}; /help lists commands)\n"
            )
        else:
            out.write("type your answer; /help lists the commands\n")
        counter = iter(range(1_000_000))

        def act(observation: Any) -> Any:
            _render_observation(observation, out)
            while True:
                out.write("> ")
                out.flush()
                line = self.input_stream.readline()
                if not line:
                    raise EOFError("input ended")
                line = line.rstrip("\n")
                if _player_command(line, names, out):
                    continue
                line = line[1:] if line.startswith("//") else line
                try:
                    return self._parse(line, space, next(counter))
                except ValueError as exc:
                    out.write(f"error: {exc}\n")

        return act

    @staticmethod
    def _parse(line: str, space: gym.Space[Any], index: int) -> Any:
        if isinstance(space, spaces.MessageSpace):
            if line.startswith("/call "):
                name, _, raw = line[6:].strip().partition(" ")
                try:
                    arguments = json.loads(raw or "{}")
                except json.JSONDecodeError as exc:
                    raise ValueError(f"arguments must be a JSON object: {exc}") from None
                if not isinstance(arguments, dict):
                    raise ValueError("arguments must be a JSON object")
                return {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": f"call_{index}", "name": name, "arguments": arguments}],
                }
            return {"role": "assistant", "content": line}
        if isinstance(space, (spaces.TextSpace, gym.spaces.Text)):
            return line
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"type the action as JSON: {exc}") from None


class ReplayPolicy:
    """Replays the actions of a run file: each episode of task T takes the next
    recorded trajectory of T, in file order."""

    def __init__(self, path: str | Path) -> None:
        from ..runs import read_run

        self.path = Path(path)
        run = read_run(self.path)
        self._queues: dict[str, deque[list[Any]]] = defaultdict(deque)
        for group in run.groups:
            for trajectory in group.trajectories:
                self._queues[group.item_id].append(list(trajectory.actions))

    def for_env(self, environment: Any) -> Any:
        task = find_attribute(environment, "rolloutgym_task_id")
        queue = self._queues.get(str(task)) if task is not None else None
        if not queue:
            raise PolicyError(f"run file {self.path} has no (more) recorded trajectories for task {task!r}")
        actions = iter(queue.popleft())

        def act(observation: Any) -> Any:
            try:
                return next(actions)
            except StopIteration:
                raise PolicyError(f"the recorded trajectory for task {task!r} has no more actions") from None

        return act


def _no_unknown_options(name: str, options: dict[str, Any], known: tuple[str, ...] = ()) -> None:
    """A built-in policy refuses options it does not take (as the model adapters do), instead of ignoring them."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = f"it takes {', '.join(known)}" if known else "it takes none"
        raise ConfigError(
            f"{name} policy: unknown option(s) {', '.join(unknown)}; {takes} (sampling options such as "
            "temperature are for model policies: hf:..., openai:..., vllm:...)"
        )


def make_oracle(model: str | None = None, **options: Any) -> OraclePolicy:
    _no_unknown_options("oracle", options)
    return OraclePolicy()


def make_null(model: str | None = None, **options: Any) -> NullPolicy:
    _no_unknown_options("null", options)
    return NullPolicy()


def _seed(name: str, model: str | None, seed: Any) -> int | None:
    text, where = (model, f"':{model}'") if model else (seed, f"seed={seed!r}")
    if text is None:
        return None
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} policy: {where} must be an integer seed, e.g. --policy {name}:7") from None


def make_random(model: str | None = None, *, seed: Any = None, **options: Any) -> RandomPolicy:
    _no_unknown_options("random", options, ("seed",))
    return RandomPolicy(_seed("random", model, seed))


def make_chaos(model: str | None = None, *, seed: Any = None, **options: Any) -> ChaosPolicy:
    _no_unknown_options("chaos", options, ("seed", "final_after"))
    return ChaosPolicy(_seed("chaos", model, seed) or 0, **options)


def make_human(model: str | None = None, **options: Any) -> HumanPolicy:
    _no_unknown_options("human", options)
    return HumanPolicy()


def make_replay(model: str | None = None, **options: Any) -> ReplayPolicy:
    _no_unknown_options("replay", options)
    if not model:
        raise ConfigError("the replay policy needs a run file: --policy replay:RUN_FILE")
    if not Path(model).exists():
        raise ConfigError(f"replay policy: run file '{model}' does not exist")
    return ReplayPolicy(model)
