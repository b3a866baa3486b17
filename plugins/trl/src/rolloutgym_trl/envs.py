"""``trl/digits-v0``: a training env whose right behaviour a small model learns in minutes.

Each task asks for a number ("Reply with digits only"). The reward is the share of the
reply's non-space characters that are digits, so a random model already earns a little
(a few percent) and every improvement is rewarded: GRPO gets a signal from the first
step. A reply passes when it is non-empty and all digits. It exists to show that
rolloutgym rewards move a model (``benchmarks/train_signal.py``, the CI proof test and
``docs/how-to/train-with-trl.md``); it is not a benchmark.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import Score, SingleTurnEnv, spaces

__all__ = ["DigitsEnv", "DigitsTask", "SumsEnv", "SumsTask", "digits_tasks", "sums_tasks"]

_SPLITS = ("train", "train", "train", "dev", "test")
_TOPICS = (
    "the number of pages in a short book",
    "a year in the last century",
    "the height of a mountain in metres",
    "a four-digit PIN",
    "the number of seats in a small theatre",
    "a postal code",
    "the price of a bicycle in dollars",
    "the length of a river in kilometres",
)


@dataclass(frozen=True)
class DigitsTask:
    """Ask for ``topic`` as a number."""

    id: str
    split: str
    topic: str


def digits_tasks() -> list[DigitsTask]:
    """40 deterministic tasks (splits in the data: 24 train, 8 dev, 8 test)."""
    generator = random.Random(20261201)
    return [DigitsTask(f"digits-{index:02d}", _SPLITS[index % 5], generator.choice(_TOPICS)) for index in range(40)]


def digit_share(text: str) -> float:
    """The share of ``text``'s non-space characters that are ASCII digits (0 for an empty text)."""
    characters = [character for character in text if not character.isspace()]
    if not characters:
        return 0.0
    return sum(character in "0123456789" for character in characters) / len(characters)


class DigitsEnv(SingleTurnEnv[list[dict[str, Any]], str]):
    """Reply with a number, digits only; reward = share of digit characters in the reply."""

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, task: DigitsTask | None = None) -> None:
        self.task = task or digits_tasks()[0]
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        content = f"Give {self.task.topic}. Reply with digits only: no words, no spaces, no punctuation."
        return [{"role": "user", "content": content}], {"task_id": self.task.id}

    def evaluate(self, action: str) -> Score:
        text = action if isinstance(action, str) else ""
        share = digit_share(text)
        stripped = "".join(text.split())
        passed = bool(stripped) and share == 1.0
        if not stripped:
            feedback = "empty reply; expected digits only"
        elif passed:
            feedback = f"digits only: {stripped[:40]!r}"
        else:
            others = sorted({character for character in stripped if character not in "0123456789"})
            feedback = f"{share:.0%} of the reply is digits; remove {''.join(others)[:20]!r}"
        return Score(
            share,
            {"digits_only": Score(float(passed), feedback=feedback), "digit_share": share},
            {"reply_characters": len(stripped)},
            feedback=feedback,
        )

    def terminal_observation(self, action: str) -> list[dict[str, Any]]:
        return []

    def oracle_action(self) -> str:
        return str(1000 + int(self.task.id.rsplit("-", 1)[-1]))

    def null_action(self) -> str:
        return ""


@dataclass(frozen=True)
class SumsTask:
    """``a + b``, graded on the reply's last integer."""

    id: str
    split: str
    a: int
    b: int

    @property
    def answer(self) -> int:
        return self.a + self.b


_SUM_RANGES = ((1, 9, 1, 9), (10, 99, 1, 9), (10, 99, 10, 99))  # easy, middle, hard


def sums_tasks() -> list[SumsTask]:
    """300 deterministic additions (200 train, 100 test), a third each of 1+1, 2+1 and 2+2 digit sums."""
    generator = random.Random(31)
    tasks = []
    for index in range(300):
        low_a, high_a, low_b, high_b = _SUM_RANGES[index % 3]
        a, b = generator.randint(low_a, high_a), generator.randint(low_b, high_b)
        tasks.append(SumsTask(f"sums-{index:03d}", "test" if index % 3 == (index // 3) % 3 else "train", a, b))
    return tasks


_SIGNED_INTEGER = re.compile(r"-?\d+")


class SumsEnv(SingleTurnEnv[list[dict[str, Any]], str]):
    """Add two integers; the reply's last integer is graded, and any other integer must be an operand."""

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, task: SumsTask | None = None) -> None:
        self.task = task or sums_tasks()[0]
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        content = f"What is {self.task.a} + {self.task.b}? Reply with the integer only."
        return [{"role": "user", "content": content}], {"task_id": self.task.id}

    def evaluate(self, action: str) -> Score:
        found = [int(text) for text in _SIGNED_INTEGER.findall(action if isinstance(action, str) else "")[:50]]
        extracted = found[-1] if found else None
        hedged = [value for value in found[:-1] if value not in (self.task.a, self.task.b, self.task.answer)]
        correct = extracted == self.task.answer and not hedged
        if not found:
            feedback = f"no integer in the reply; expected {self.task.answer}"
        elif hedged:
            feedback = f"the reply also gives {hedged[0]}: a hedged answer scores 0"
        else:
            feedback = f"correct: {extracted}" if correct else f"expected {self.task.answer}, got {extracted}"
        return Score(
            float(correct),
            {"correct": Score(float(correct), feedback=feedback)},
            {"expected": self.task.answer, "extracted": extracted},
            feedback=feedback,
        )

    def terminal_observation(self, action: str) -> list[dict[str, Any]]:
        return []

    def oracle_action(self) -> str:
        return str(self.task.answer)

    def null_action(self) -> str:
        return ""
