"""IFEval-style instruction following: rolloutgym's own prompts, graded by ``if-verifiable`` 0.1.2.

IFEval's prompts are not shipped by the package (it downloads them from a hub), so the task set
is ours (``_ifeval_tasks``: 20 writing requests x 23 of the package's IFEval checkers = 460
tasks; topics 16-19 are the test split). Grading is the package's
``if_verifiable.common.evaluate_instructions`` with its IFEval registry: the reward is its
prompt-level strict verdict (``binary_strict``, every instruction followed by the reply as
written); the loose verdict and the instruction-level fraction are components.

Differences from the package, each a hole a policy could train into:

* langdetect is seeded (``DetectorFactory.seed = 0``) so the language verdict is the same on
  every call (unseeded, langdetect samples at random and may flip on short text);
* a reply with no letters at all fails ``language:response_language`` (the package passes any
  text langdetect cannot read, e.g. ``"1234"``);
* a reply holding more than one of the options fails ``detectable_format:constrained_response``
  (the package passes "My answer is yes. My answer is no.": a hedge).

Not served: the two checkers that need NLTK's punkt data (``_ifeval_tasks.NEEDS_NLTK_DATA``).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import Score, SingleTurnEnv, spaces
from rolloutgym_protocol.errors import ConfigError

from ._ifeval_catalogue import INSTALL_HINT, PACKAGE, package_version
from ._ifeval_tasks import CHECKERS, FLOOR_WORDS, FLOORED, TEST_TOPICS, TOPICS, WORD_FLOOR, build
from ._ifeval_training import UNTRAINABLE, on_topic

__all__ = ["IFEvalEnv", "IFEvalTask", "grade", "load_tasks", "make_env", "package_verdict", "package_version"]

SIZE = len(TOPICS) * len(CHECKERS)
_SEED_LOCK = threading.Lock()
OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@dataclass(frozen=True)
class IFEvalTask:
    """One prompt: our request plus instructions, with the package's checker ids and arguments."""

    id: str
    prompt: str = field(repr=False)
    instruction_id_list: tuple[str, ...] = ()
    kwargs: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    oracle: str = field(default="", repr=False)
    near_miss: str = field(default="", repr=False)
    split: str = "train"
    topic: int = 0

    @property
    def untrainable(self) -> str | None:
        """Why the training reward cannot be trusted on this task (``None`` when it can)."""
        return next((UNTRAINABLE[name] for name in self.instruction_id_list if name in UNTRAINABLE), None)

    def __str__(self) -> str:
        return self.id


def _task(index: int) -> IFEvalTask:
    topic_number, checker, built = build(index)
    topic = TOPICS[topic_number]
    ids, kwargs, instructions = [checker], [built.kwargs], [built.instruction]
    if checker in FLOORED:
        ids.append(WORD_FLOOR)
        kwargs.append({"num_words": FLOOR_WORDS, "relation": "at least"})
        instructions.append(f"Answer with at least {FLOOR_WORDS} words.")
    return IFEvalTask(
        id=f"ifeval-{index:03d}-{checker.split(':')[1]}",
        prompt=f"{topic['request']} {' '.join(instructions)}",
        instruction_id_list=tuple(ids),
        kwargs=tuple(kwargs),
        oracle=built.oracle,
        near_miss=built.near_miss,
        split="test" if topic_number in TEST_TOPICS else "train",
        topic=topic_number,
    )


@functools.cache
def load_tasks() -> tuple[IFEvalTask, ...]:
    """The 460 tasks, in index order (train and test)."""
    return tuple(_task(index) for index in range(SIZE))


def tasks_all() -> list[IFEvalTask]:
    """Every task of ifeval/instructions-v0 (split in each task's ``split``)."""
    return list(load_tasks())


@functools.cache
def _evaluator() -> tuple[Any, Any]:
    try:
        import langdetect
        from if_verifiable.common import evaluate_instructions
        from if_verifiable.ifeval.instructions_registry import INSTRUCTION_DICT
    except ImportError as error:
        raise ConfigError(f"the ifeval envs are graded by {PACKAGE}, which is not installed: {INSTALL_HINT}") from error
    langdetect.DetectorFactory.seed = 0
    return evaluate_instructions, INSTRUCTION_DICT


def package_verdict(task: IFEvalTask, response: str) -> tuple[list[Any], Any]:
    """The package's own (per-instruction results, scores) for ``response`` (langdetect seeded)."""
    evaluate, registry = _evaluator()
    with _SEED_LOCK:  # langdetect's seeded sampler is shared state
        return evaluate(response, list(task.instruction_id_list), [dict(k) for k in task.kwargs], task.prompt, registry)


def _guarded(passed: dict[str, bool], response: str) -> dict[str, bool]:
    """Per-instruction verdicts with the two guards of the module doc (strict and loose alike)."""
    if "language:response_language" in passed and not re.search(r"[^\W\d_]", response):
        passed["language:response_language"] = False
    if "detectable_format:constrained_response" in passed and sum(option in response for option in OPTIONS) > 1:
        passed["detectable_format:constrained_response"] = False
    return passed


def grade(task: IFEvalTask, response: str) -> Score:
    """The env's score: the package's strict prompt-level verdict, with the two guards of the module doc."""
    results, _ = package_verdict(task, response)
    passed = _guarded({result.instruction_id: result.strict_pass for result in results}, response)
    loose = _guarded({result.instruction_id: result.loose_pass for result in results}, response)
    strict = bool(passed) and all(passed.values())
    components = {"strict": float(strict), "loose": float(bool(loose) and all(loose.values()))}
    components["instructions"] = sum(passed.values()) / len(passed) if passed else 0.0
    components.update({name: float(value) for name, value in passed.items()})
    failed = [name for name, value in passed.items() if not value]
    if not passed:
        feedback = "Empty reply (after any <think> block): no instruction followed."
    elif failed:
        feedback = "Not followed: " + ", ".join(failed) + "."
    else:
        feedback = "Every instruction followed."
    meta = {
        "source": f"{PACKAGE} {package_version()}",
        "partial_loose": sum(loose.values()) / len(loose) if loose else 0.0,
    }
    return Score(float(strict), components, meta, feedback=feedback)


def training_score(task: IFEvalTask, score: Score, response: str, reward: str) -> Score:
    """``score`` (IFEval's) with the training verdict beside it (``_ifeval_training``); its value
    is the one ``reward`` names: ``"benchmark"`` (IFEval's) or ``"training"``."""
    untrainable = task.untrainable
    if untrainable is not None:
        training, why = False, f"untrainable: {untrainable}"
    else:
        topical, why = on_topic(task.topic, response)
        training = bool(score.value) and topical
    components = {**score.components, "benchmark": score.value, "training": float(training)}
    metadata = {**score.metadata, "reward": reward, "trainable": untrainable is None, "training_check": why}
    value = score.value if reward == "benchmark" else float(training)
    feedback = score.feedback if reward == "benchmark" or training else f"{score.feedback} Training reward 0: {why}."
    return Score(value, components, metadata, feedback=feedback)


class IFEvalEnv(SingleTurnEnv[list[dict[str, Any]], str]):
    """One prompt with verifiable instructions; the action is the reply text.

    Args:
        task: the task.
        reward: ``"benchmark"`` (default): IFEval's strict verdict, the benchmark's score;
            ``"training"``: also the reply must be about its request (``_ifeval_training``), so
            one fixed reply cannot pass the tasks of every request. Both are in the score's
            components (``benchmark``, ``training``) either way.
    """

    metadata = {"render_modes": []}

    def __init__(self, task: IFEvalTask, *, reward: str = "benchmark") -> None:
        if reward not in ("benchmark", "training"):
            raise ConfigError(f"reward must be 'benchmark' or 'training', got {reward!r}")
        self.task = task
        self.reward = reward
        self.observation_space = spaces.messages.chat(min_length=0)
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        info = {"task_id": self.task.id, "instructions": list(self.task.instruction_id_list), "reward": self.reward}
        info["trainable"] = self.task.untrainable is None
        return [{"role": "user", "content": self.task.prompt}], info

    def terminal_observation(self, action: Any) -> list[dict[str, Any]]:
        return []

    def evaluate(self, action: Any) -> Score:
        text = action.get("content") if isinstance(action, dict) else action
        if not isinstance(text, str):
            feedback = f"the reply must be text (a str or an assistant message), got {type(action).__name__}"
            return Score(0.0, {"strict": 0.0, "loose": 0.0, "instructions": 0.0}, feedback=feedback)
        return training_score(self.task, grade(self.task, text), text, self.reward)

    def oracle_action(self) -> str:
        return self.task.oracle

    def null_action(self) -> str:
        return ""


def make_env(task: IFEvalTask | None = None, *, reward: str = "benchmark") -> IFEvalEnv:
    """The factory of ``ifeval/instructions-v0`` (``reward``: see :class:`IFEvalEnv`)."""
    if task is None:
        task = load_tasks()[0]
    if not isinstance(task, IFEvalTask):
        raise ConfigError(f"task must be an IFEvalTask, got {type(task).__name__}")
    _evaluator()
    return IFEvalEnv(task, reward=reward)
