"""Single-turn math environments: the prompt is one user message, the action is the answer text.

* :class:`MathEnv` -- any problem with any ``grade(response, expected) -> Score``;
* :class:`GSM8KEnv` -- GSM8K grading (any number; ``#### 72`` or ``\\boxed{72}`` marks it);
* :class:`AIMEEnv` -- AIME grading (an integer 0-999 in ``\\boxed{}``).

They follow the chat-environment convention: ``reset`` returns ``[system?, user]``, ``step``
takes the answer (a string; an assistant message dict is read for its ``content``) and ends
the episode with ``info["score"]`` holding the ``correct`` and ``formatted`` components.
``oracle_action()`` returns a correctly formatted reference answer and ``null_action()`` "".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from rolloutgym_protocol import Score, SingleTurnEnv, spaces

from ._extract import DEFAULT_MAX_BOXED_ANSWERS, BoxedChoice
from .examples import MathExample
from .grading import AIME_MAX, grade_math

__all__ = [
    "AIME_PROMPT_SUFFIX",
    "GSM8K_PROMPT_SUFFIX",
    "AIMEEnv",
    "GSM8KEnv",
    "MathEnv",
]

AIME_PROMPT_SUFFIX = (
    "\n\nThis is an AIME problem. The answer is an integer from 000 to 999. "
    "Show your work step by step, then put your final answer in \\boxed{}."
)
GSM8K_PROMPT_SUFFIX = (
    "\n\nSolve the problem step by step. Write the final answer, a number, on the last line as '#### <answer>'."
)

Chat = list[dict[str, Any]]
Grade = Callable[[str, str], Score | float]
_CALCULATOR_NOTE = re.compile(r"<<[^<>]*>>")


class MathEnv(SingleTurnEnv[Chat, str]):
    """One math problem, answered in one message and graded by ``grade(response, example.answer)``.

    Args:
        example: the problem and its reference answer.
        grade: ``grade(response, expected)`` returning a :class:`Score` (or a number).
        system_prompt: an optional system message placed before the problem.
        prompt_suffix: text appended to the question (formatting instructions).
    """

    metadata = {"render_modes": []}

    def __init__(
        self, example: MathExample, grade: Grade, *, system_prompt: str | None = None, prompt_suffix: str = ""
    ) -> None:
        if not isinstance(example, MathExample):
            raise TypeError(
                f"example must be a MathExample, got {type(example).__name__}; build one with "
                "MathExample(question=..., answer=...)"
            )
        self.example = example
        self.grade = grade
        self.system_prompt = system_prompt
        self.prompt_suffix = prompt_suffix
        self.observation_space = spaces.messages.chat(min_length=0)
        self.action_space = spaces.text.text()
        self._invalid_actions = 0

    @property
    def example_id(self) -> str | None:
        return self.example.example_id

    def prompt_messages(self) -> Chat:
        """The messages ``reset`` returns: the optional system prompt, then the problem."""
        messages: Chat = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": self.example.question + self.prompt_suffix})
        return messages

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[Chat, dict[str, Any]]:
        self._invalid_actions = 0
        return self.prompt_messages(), {"example_id": self.example_id}

    def _response_text(self, action: Any) -> str | None:
        if isinstance(action, str):
            return action
        if (
            isinstance(action, dict)
            and action.get("role", "assistant") == "assistant"
            and isinstance(action.get("content"), str)
        ):
            return action["content"]
        return None

    def evaluate(self, action: Any) -> tuple[Score, dict[str, Any]]:
        response = self._response_text(action)
        info: dict[str, Any] = {"example_id": self.example_id}
        if response is None:
            self._invalid_actions += 1
            feedback = f"the answer must be text (a str), got {type(action).__name__}"
            score = Score(
                0.0,
                {"correct": Score(0.0, feedback=feedback), "formatted": Score(0.0, feedback=feedback)},
                feedback=feedback,
            )
        else:
            score = Score.from_value(self.grade(response, self.example.answer))
        info["invalid_actions"] = self._invalid_actions
        return score, info

    def terminal_observation(self, action: Any) -> Chat:
        return []

    def oracle_action(self) -> str:
        """The reference answer, formatted the way the prompt asks."""
        return f"The final answer is \\boxed{{{self.example.answer.strip()}}}."

    def null_action(self) -> str:
        return ""


class GSM8KEnv(MathEnv):
    """A GSM8K problem graded by :func:`~rolloutgym_benchmarks.grade_gsm8k`.

    Args:
        example: the problem; its answer is a GSM8K solution ending in ``#### <number>`` or a number.
        system_prompt: an optional system message.
        prompt_suffix: formatting instructions appended to the question.
        boxed: which ``\\boxed{}`` counts when the response has several (``"last"`` or ``"first"``).
        symbolic: compare non-numeric answers with sympy.
        max_boxed_answers: more different ``\\boxed{}`` values than this are a hedge and score 0
            (default 1); ``None`` turns hedge detection off (rolloutlib's behaviour).
    """

    def __init__(
        self,
        example: MathExample,
        *,
        system_prompt: str | None = None,
        prompt_suffix: str = GSM8K_PROMPT_SUFFIX,
        boxed: BoxedChoice = "last",
        symbolic: bool = False,
        max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
    ) -> None:
        _check_options(boxed, symbolic, max_boxed_answers)
        grade = functools.partial(
            grade_math, kind="gsm8k", boxed=boxed, symbolic=symbolic, max_boxed_answers=max_boxed_answers
        )  # picklable, unlike a closure
        super().__init__(example, grade, system_prompt=system_prompt, prompt_suffix=prompt_suffix)

    def oracle_action(self) -> str:
        """The reference solution (calculator notes removed), ending in ``#### <answer>``."""
        solution = _CALCULATOR_NOTE.sub("", self.example.answer).strip()
        if "####" in solution:
            return solution
        return f"#### {solution}"


class AIMEEnv(MathEnv):
    """An AIME problem graded by :func:`~rolloutgym_benchmarks.grade_aime` (integers 0-999).

    ``boxed`` and ``max_boxed_answers`` are as in :class:`GSM8KEnv`.

    Raises:
        ValueError: the example's answer is not an integer from 0 to 999.
    """

    def __init__(
        self,
        example: MathExample,
        *,
        system_prompt: str | None = None,
        prompt_suffix: str = AIME_PROMPT_SUFFIX,
        boxed: BoxedChoice = "last",
        max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
    ) -> None:
        answer = example.answer.strip() if isinstance(example, MathExample) else ""
        if not (answer.isdigit() and 0 <= int(answer) <= AIME_MAX):
            raise ValueError(
                f"AIME example {getattr(example, 'example_id', None)!r} has answer {answer!r}; AIME answers are "
                f"integers from 0 to {AIME_MAX}"
            )

        _check_options(boxed, False, max_boxed_answers)
        grade = functools.partial(grade_math, kind="aime", boxed=boxed, max_boxed_answers=max_boxed_answers)
        super().__init__(example, grade, system_prompt=system_prompt, prompt_suffix=prompt_suffix)

    def oracle_action(self) -> str:
        return f"The answer is \\boxed{{{int(self.example.answer.strip())}}}."


def _check_options(boxed: Any, symbolic: Any, max_boxed_answers: Any = None) -> None:
    if max_boxed_answers is not None and (
        not isinstance(max_boxed_answers, int) or isinstance(max_boxed_answers, bool) or max_boxed_answers < 1
    ):
        raise ValueError(f"max_boxed_answers must be a positive integer or None, got {max_boxed_answers!r}")
    if boxed not in ("first", "last"):
        raise ValueError(f"boxed must be 'first' or 'last' (which \\boxed{{}} counts), got {boxed!r}")
    if not isinstance(symbolic, bool):
        raise TypeError(f"symbolic must be true or false, got {symbolic!r}")
