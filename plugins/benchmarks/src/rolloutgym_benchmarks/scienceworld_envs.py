"""ScienceWorld (``scienceworld`` 1.2.3) task types as multi-turn text envs, scored by its simulator.

One env per task type (30); a task is one variation of it, in the package's own train, dev
and test variation splits (``data/scienceworld_tasks.json`` lists them, read from the package,
so that listing starts no JVM). The observation is the task description and the simulator's
"look around"; each action is one text command for the simulator. The episode ends as the
package's ``ScienceWorldEnv.step`` ends it: the simulator says the task is completed, the score
is negative (a failed task), or the moves exceed the step limit (option ``step_limit``,
default 100 as the package's; free commands such as "look around" take no move, so an
episode is also cut after twice that many commands). Intermediate rewards are 0; the last step's
reward is 1 when the simulator's score is 100 (the task completed), else 0; ``partial_credit``
makes it the score over 100 (0 when negative). Components: ``score`` (the simulator's score /
100, 0 when negative) and ``completed``. The score gives points for sub-goals, some of which
doing nothing reaches (e.g. 20 of 100 for waiting in the paint-mixing tasks), hence the
default. During the episode ``info["progress"]`` is the simulator's score so far (the
package's infos give it too).

The simulator is a Java server (Java 17) that takes seconds to start; the envs of one process
share idle simulators (an env takes one at reset and gives it back at close). Steps call the
simulator directly rather than through ``ScienceWorldEnv.step``, which also lists every valid
action on every step (about ten times the cost); the score and the end rules are the same.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import threading
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.errors import ConfigError

from ._scienceworld_catalogue import (
    CATALOGUE,
    INSTALL_HINT,
    PACKAGE,
    SPLITS,
    STEP_LIMIT,
    loader_name,
    package_version,
)

__all__ = ["CATALOGUE", "ScienceWorldEnv", "ScienceWorldTask", "load_tasks", "make_env", "package_version"]


@dataclass(frozen=True)
class ScienceWorldTask:
    """One variation of a ScienceWorld task type."""

    id: str
    task_name: str
    variation: int
    split: str

    def __str__(self) -> str:
        return self.id


def load_tasks(task_name: str) -> list[ScienceWorldTask]:
    """Every variation of ``task_name``, with the package's split of each."""
    if task_name not in CATALOGUE:
        raise ConfigError(f"unknown ScienceWorld task {task_name!r}; choose one of {', '.join(CATALOGUE)}")
    entry = CATALOGUE[task_name]
    split_of = {v: split for split in SPLITS for start, stop in entry[split] for v in range(start, stop)}
    return [
        ScienceWorldTask(f"{task_name}/{variation}", task_name, variation, split_of[variation])
        for variation in sorted(split_of)
    ]


def _loader(task_name: str) -> Any:
    def load() -> list[ScienceWorldTask]:
        return load_tasks(task_name)

    load.__name__ = load.__qualname__ = loader_name(task_name)
    load.__doc__ = f"The variations of ScienceWorld's {task_name} task."
    return load


for _name in CATALOGUE:
    globals()[loader_name(_name)] = _loader(_name)
del _name


class _Pool:
    """Idle simulators of this process (each a JVM), handed to one env at a time."""

    def __init__(self) -> None:
        self._idle: list[Any] = []
        self._all: list[Any] = []
        self._lock = threading.Lock()

    def acquire(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        check_installed()
        from scienceworld import ScienceWorldEnv as Simulator

        simulator = Simulator("", envStepLimit=STEP_LIMIT)
        with self._lock:
            self._all.append(simulator)
        return simulator

    def release(self, simulator: Any) -> None:
        with self._lock:
            self._idle.append(simulator)

    def close_all(self) -> None:
        with self._lock:
            simulators, self._all, self._idle = self._all, [], []
        for simulator in simulators:
            try:
                simulator.close()
                # Wait for the JVM, so that the package's __del__ finds it gone and writes nothing.
                simulator._gateway.java_process.wait(timeout=10)
            except Exception:  # noqa: BLE001 - the JVM may already be gone at exit
                pass


POOL = _Pool()
atexit.register(POOL.close_all)


def _step_limit(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"step_limit must be a positive integer, got {value!r}")
    return value


def check_installed() -> None:
    """Raise ConfigError naming what to install when the package or Java is missing."""
    if importlib.util.find_spec("scienceworld") is None:
        raise ConfigError(f"the ScienceWorld envs need {PACKAGE}, which is not installed: {INSTALL_HINT}")
    if shutil.which("java") is None:
        raise ConfigError(f"the ScienceWorld simulator needs Java 17, and no 'java' is on PATH: {INSTALL_HINT}")


class ScienceWorldEnv(gym.Env[str, str]):
    """One ScienceWorld variation; actions are simulator commands ("open door to kitchen")."""

    metadata = {"render_modes": []}

    def __init__(self, task: ScienceWorldTask, *, step_limit: int = STEP_LIMIT, partial_credit: bool = False) -> None:
        self.task = task
        self.partial_credit = bool(partial_credit)
        self.step_limit = _step_limit(step_limit)
        self.observation_space = spaces.text.text()
        self.action_space = spaces.text.text()
        self._simulator: Any = None
        self._gold: list[str] | None = None
        self._done = True

    def _load(self, *, gold: bool) -> None:
        self._simulator.load(self.task.task_name, self.task.variation, "", generateGoldPath=gold)
        self._gold = list(self._simulator.get_gold_action_sequence()) if gold else None
        # As the package's reset(): a load alone can leave the world as the last episode (or the
        # gold path's generation) left it.
        self._simulator.server.reset()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        limit = _step_limit((options or {}).get("step_limit", self.step_limit))
        if self._simulator is None:
            self._simulator = POOL.acquire()
        self._limit, self._steps, self._oracle_index, self._done = limit, 0, 0, False
        self._load(gold=False)
        server = self._simulator.server
        look = server.step("look around")
        observation = f"{server.freeActionTaskDesc()}\n\n{look}"
        return observation, {"task_id": self.task.id, "progress": self._progress(), "moves": int(server.getNumMoves())}

    def _progress(self) -> int:
        return int(round(100 * self._simulator.server.getScore()))

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        command = action.get("content") if isinstance(action, dict) else action
        if not isinstance(command, str) or not command.strip():
            observation = "Not a command: send one text command for the simulator, e.g. 'look around'."
            return observation, 0.0, False, False, {"invalid_action": True, "progress": self._progress()}
        problem = _command_problem(command.strip())
        if problem is not None:
            observation = f"Not a command: {problem}. Send one line of text for the simulator, e.g. 'look around'."
            return observation, 0.0, False, False, {"invalid_action": True, "progress": self._progress()}
        server = self._simulator.server
        observation = server.step(command.strip())
        self._steps += 1
        score, moves = self._progress(), int(server.getNumMoves())
        terminated = bool(server.getCompleted()) or score < 0
        # The package cuts at envStepLimit moves; free commands ("look around") take no move, so
        # an episode is also cut after twice that many commands.
        truncated = not terminated and (moves > self._limit or self._steps >= 2 * self._limit)
        info: dict[str, Any] = {"progress": score, "moves": moves}
        if not (terminated or truncated):
            return observation, 0.0, False, False, info
        self._done = True
        fraction = max(score, 0) / 100
        value = fraction if self.partial_credit else float(score >= 100)
        feedback = (
            "ScienceWorld: task completed (score 100)."
            if score >= 100
            else f"ScienceWorld score {score}/100"
            + (" (task failed)." if score < 0 else " (step limit reached)." if truncated else ".")
        )
        meta = {"source": f"{PACKAGE} {package_version()}", "simulator_score": score, "moves": moves}
        result = Score(value, {"score": fraction, "completed": float(score >= 100)}, meta, feedback=feedback)
        return observation, result.value, terminated, truncated, {**info, **result.as_info()}

    def oracle_action(self) -> str:
        """The package's gold action sequence for this variation, one command per step."""
        if self._gold is None:
            if self._steps:
                raise RuntimeError("the oracle must start at the first step of an episode")
            self._load(gold=True)
            self._simulator.server.step("look around")
        index, self._oracle_index = self._oracle_index, self._oracle_index + 1
        return self._gold[index] if index < len(self._gold) else "look around"

    def null_action(self) -> str:
        return "wait1"

    def close(self) -> None:
        if self._simulator is not None:
            POOL.release(self._simulator)
            self._simulator = None
        self._done = True


def make_env(
    task: ScienceWorldTask | None = None,
    *,
    task_name: str = "boil",
    step_limit: int = STEP_LIMIT,
    partial_credit: bool = False,
) -> ScienceWorldEnv:
    """The factory of the ``scienceworld/*-v0`` ids (``task_name`` comes from the spec's kwargs).

    ``step_limit``: the moves after which an episode is cut (the package's ``envStepLimit``).
    ``partial_credit``: the reward is the simulator's score / 100 instead of 1 only for a
    completed task (its score gives points for sub-goals, some reached by waiting).
    """
    check_installed()
    if task is None:
        task = load_tasks(task_name)[0]
    if not isinstance(task, ScienceWorldTask):
        raise ConfigError(f"task must be a ScienceWorldTask, got {type(task).__name__}")
    return ScienceWorldEnv(task, step_limit=step_limit, partial_credit=partial_credit)


MAX_COMMAND_CHARS = 1000


def _command_problem(command: str) -> str | None:
    """Why the simulator cannot take ``command`` (it crosses to Java as UTF-8 text), or None."""
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        return "the text holds characters that are not valid Unicode (lone surrogates)"
    if len(command) > MAX_COMMAND_CHARS:
        return f"the command is {len(command)} characters long (at most {MAX_COMMAND_CHARS})"
    if any(ord(character) < 32 and character not in "\t" for character in command):
        return "the command holds control characters (one line of text, please)"
    return None
