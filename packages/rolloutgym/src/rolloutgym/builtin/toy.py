"""The ``toy`` environments: small, deterministic demos that exercise the whole stack.

* ``toy/guess-v0`` (:class:`GuessNumberEnv`): multi-turn, chat messages and tool calls.
* ``toy/arith-v0`` (:class:`ArithmeticEnv`): single-turn text answers.

Both follow the chat-environment convention (see ``docs/explanation/chat-envs.md``):
observations are the *new* chat messages since the last action, actions are assistant
messages (``{"role": "assistant", "content": ..., "tool_calls"?: [...]}``) or plain text.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import ForkableEnv, Score, SingleTurnEnv, spaces
from rolloutgym_protocol.toolcalls import normalize_tool_action, shape_error

__all__ = ["ArithTask", "ArithmeticEnv", "GuessNumberEnv", "GuessTask", "arith_tasks", "guess_tasks"]

_SPLITS = ("train", "train", "train", "dev", "test")


@dataclass(frozen=True)
class GuessTask:
    """Find ``target`` in ``[low, high]`` within ``max_guesses`` guesses."""

    id: str
    split: str
    low: int
    high: int
    target: int
    max_guesses: int


def guess_tasks() -> list[GuessTask]:
    """30 deterministic tasks (splits in the data: 18 train, 6 dev, 6 test)."""
    generator = random.Random(20261129)
    tasks = []
    for index in range(30):
        high = generator.choice((10, 20, 50, 100))
        target = generator.randint(1, high)
        max_guesses = max(4, high.bit_length() + 1)
        tasks.append(GuessTask(f"guess-{index:02d}", _SPLITS[index % 5], 1, high, target, max_guesses))
    return tasks


GUESS_TOOL = {
    "type": "function",
    "function": {
        "name": "guess",
        "description": "Guess the hidden number. Returns 'higher', 'lower' or 'correct'.",
        "parameters": {
            "type": "object",
            "properties": {"number": {"type": "integer"}},
            "required": ["number"],
            "additionalProperties": False,
        },
    },
}


class GuessNumberEnv(ForkableEnv, gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """Guess the hidden number with the ``guess`` tool.

    The episode terminates when the number is found (reward 1), when the guess
    budget is spent (reward 0), or when the agent answers without a tool call
    (reward 0). A malformed or unknown tool call returns a tool error message and
    counts in ``info["invalid_actions"]`` (it does not use up a guess).
    """

    metadata = {"render_modes": [], "nonblocking": True}
    tools = [GUESS_TOOL]

    def __init__(self, task: GuessTask | None = None) -> None:
        self.task = task or guess_tasks()[0]
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._low = self.task.low
        self._high = self.task.high
        self._guesses = 0
        self._invalid = 0
        self._done = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        super().reset(seed=seed)
        self._low, self._high = self.task.low, self.task.high
        self._guesses = 0
        self._invalid = 0
        self._done = False
        prompt = (
            f"I am thinking of an integer between {self.task.low} and {self.task.high}. "
            f"Find it with the guess tool; you have {self.task.max_guesses} guesses."
        )
        messages = [
            {"role": "system", "content": "You are playing a guessing game. Use the tools you are given."},
            {"role": "user", "content": prompt},
        ]
        return messages, {"task_id": self.task.id}

    def _finish(self, found: bool, reason: str) -> tuple[float, dict[str, Any]]:
        self._done = True
        score = Score(
            1.0 if found else 0.0,
            {"found": Score(1.0 if found else 0.0, feedback=reason)},
            {"guesses": self._guesses, "target": self.task.target},
            feedback=reason,
        )
        return score.value, {"score": score.to_dict(), "invalid_actions": self._invalid, "guesses": self._guesses}

    def step(self, action: dict[str, Any]) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        if not calls:
            reward, info = self._finish(False, f"answered without finding the number (target was {self.task.target})")
            return [], reward, True, False, info
        if not isinstance(calls, list):  # a malformed message: one invalid action, not a crash
            calls = [None]
        observations = []
        for call in calls:
            call_id = call.get("id", "call") if isinstance(call, dict) else "call"
            call_id = call_id if isinstance(call_id, str) else "call"
            number = _guess_argument(call)
            if number is None:
                self._invalid += 1
                message = "error: " + shape_error(
                    "call the 'guess' tool with an integer argument 'number', e.g. {\"number\": 7}"
                )
                observations.append({"role": "tool", "tool_call_id": call_id, "content": message})
                continue
            self._guesses += 1
            if number == self.task.target:
                observations.append({"role": "tool", "tool_call_id": call_id, "content": "correct"})
                reward, info = self._finish(True, f"found {number} in {self._guesses} guesses")
                return observations, reward, True, False, info
            hint = "higher" if number < self.task.target else "lower"
            if number < self.task.target:
                self._low = max(self._low, number + 1)
            else:
                self._high = min(self._high, number - 1)
            observations.append({"role": "tool", "tool_call_id": call_id, "content": hint})
            if self._guesses >= self.task.max_guesses:
                reward, info = self._finish(
                    False, f"used all {self.task.max_guesses} guesses without finding {self.task.target}"
                )
                return observations, reward, True, False, info
        return observations, 0.0, False, False, {"invalid_actions": self._invalid, "guesses": self._guesses}

    def _snapshot_state(self) -> dict[str, Any]:
        return {
            "low": self._low,
            "high": self._high,
            "guesses": self._guesses,
            "invalid": self._invalid,
            "done": self._done,
        }

    def _restore_state(self, data: dict[str, Any]) -> None:
        self._low, self._high = int(data["low"]), int(data["high"])
        self._guesses, self._invalid, self._done = int(data["guesses"]), int(data["invalid"]), bool(data["done"])

    def oracle_action(self) -> dict[str, Any]:
        """Binary search over what the hints have revealed so far."""
        middle = (self._low + self._high) // 2
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"call_{self._guesses}", "name": "guess", "arguments": {"number": middle}}],
        }

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}


def _guess_argument(call: Any) -> int | None:
    if not isinstance(call, dict) or call.get("name") != "guess":
        return None
    arguments = call.get("arguments")
    if not isinstance(arguments, dict) or set(arguments) != {"number"}:
        return None
    number = arguments["number"]
    if isinstance(number, bool) or not isinstance(number, int):
        return None
    return number


@dataclass(frozen=True)
class ArithTask:
    """Compute ``question``; the answer is the integer ``answer``."""

    id: str
    split: str
    question: str
    answer: int


def arith_tasks() -> list[ArithTask]:
    """40 deterministic integer arithmetic questions (splits in the data)."""
    generator = random.Random(7)
    tasks = []
    for index in range(40):
        a, b = generator.randint(2, 99), generator.randint(2, 99)
        operator = ("+", "-", "*")[index % 3]
        answer = a + b if operator == "+" else a - b if operator == "-" else a * b
        tasks.append(ArithTask(f"arith-{index:02d}", _SPLITS[index % 5], f"What is {a} {operator} {b}?", answer))
    return tasks


_INTEGER = re.compile(r"-?\d[\d,]*")
_OPERANDS = re.compile(r"\d+")
_LONGEST_INTEGER = 30  # digits; longer numbers are never an answer here (and int() of them is slow)


def _integer(text: str) -> int | None:
    digits = text.replace(",", "")
    if len(digits) > _LONGEST_INTEGER or digits in ("", "-"):
        return None
    return int(digits)


class ArithmeticEnv(SingleTurnEnv[list[dict[str, Any]], str]):
    """Answer an arithmetic question; the last integer in the answer is graded.

    Every other integer in the answer must be one of the question's numbers (work shown),
    so a hedge such as "42 or 43" scores 0 (TASKS.md rule 7).
    """

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, task: ArithTask | None = None) -> None:
        self.task = task or arith_tasks()[0]
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        content = f"{self.task.question} Reply with the integer only."
        return [{"role": "user", "content": content}], {"task_id": self.task.id}

    def evaluate(self, action: str) -> Score:
        found = _INTEGER.findall(action if isinstance(action, str) else "")
        extracted = _integer(found[-1]) if found else None
        correct = extracted == self.task.answer
        operands = {int(number) for number in _OPERANDS.findall(self.task.question)}
        hedged = sorted(
            {
                token.strip()
                for token in found[:-1]
                if _integer(token) not in operands and _integer(token) != self.task.answer
            }
        )
        if correct and hedged:
            correct = False
            feedback = (
                f"the answer ends with {extracted} but also gives {', '.join(hedged)[:200]}: a hedged answer scores 0"
            )
        elif not found:
            feedback = f"no integer found in the answer; expected {self.task.answer}"
        elif extracted is None:
            feedback = f"expected {self.task.answer}, got a {len(found[-1])}-character number"
        elif correct:
            feedback = f"correct: {extracted}"
        else:
            feedback = f"expected {self.task.answer}, got {extracted}"
        return Score(
            float(correct),
            {"correct": Score(float(correct), feedback=feedback), "formatted": float(extracted is not None)},
            {"expected": self.task.answer, "extracted": extracted},
            feedback=feedback,
        )

    def terminal_observation(self, action: str) -> list[dict[str, Any]]:
        return []

    def oracle_action(self) -> str:
        return str(self.task.answer)

    def null_action(self) -> str:
        return ""
