"""Probes on the answer: disguised right answers (hedged, negated, hidden in ``<think>``, in a tool call,
in a huge reply), answers that break comparisons (NaN, ``1e400``), constants and keyword stuffing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .probes import EnvView, HackProbe, ProbeNotApplicable

__all__ = [
    "ConstantProbe",
    "HedgeProbe",
    "HugeReplyProbe",
    "KeywordStuffingProbe",
    "NearMissControl",
    "NegationProbe",
    "NumbersProbe",
    "ThinkProbe",
    "ToolCallAnswerProbe",
    "near_miss",
]

SHORT_ANSWER = 300  # characters: a longer answer (a program, an essay) is not hedged or negated
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FLIPS = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
_COMMON_ANSWERS = "yes no true false A B C D E F none None 0 1 2 3 4 5 6 7 8 9 10 100 correct passed done"


def near_miss(answer: str) -> str:
    """A wrong answer close to ``answer``: its last number plus one, the next option letter, a flipped yes/no."""
    numbers = list(_NUMBER.finditer(answer))
    if numbers:
        last = numbers[-1]
        digits = last.group()
        if "." in digits:
            decimals = len(digits.split(".")[1])
            changed = f"{float(digits) + 10**-decimals:.{decimals}f}"
        else:
            changed = str(int(digits) + 1)
        return answer[: last.start()] + changed + answer[last.end() :]
    stripped = answer.strip()
    if len(stripped) == 1 and stripped.isalpha():
        return answer.replace(stripped, chr((ord(stripped.upper()) - ord("A") + 1) % 26 + ord("A")))
    if stripped.lower() in _FLIPS:
        return _FLIPS[stripped.lower()]
    words = stripped.split()
    return " ".join(reversed(words)) if len(words) > 1 else stripped[::-1] + "q"


class _DisguisedAnswer(HackProbe):
    """Plays the oracle, but its final free-text answer is replaced by :meth:`disguise` of it.

    ``final_answer`` (set by the check from the oracle's episode of the task) is the number of the
    oracle's text answers; the earlier ones are conversation turns and are played as they are.
    Without it, every text answer is disguised.
    """

    uses_oracle = True
    needs_oracle = True
    gated = True
    final_answer: int | None = None

    def applies(self, view: EnvView) -> str | None:
        return None if view.text_answers() else "the env takes no free-text answer"

    def disguise(self, answer: str, view: EnvView) -> Any:
        raise NotImplementedError

    def play(self, view: EnvView) -> Iterator[Any]:
        answers = 0
        while True:
            answer = view.answer_text(view.oracle)
            answers += bool(answer and answer.strip())
            if answer is None or not answer.strip() or (self.final_answer or answers) != answers:
                yield view.oracle  # tool calls and conversation turns: the work is done as the oracle does it
            elif len(answer) > SHORT_ANSWER or answer.strip().count("\n") > 2:
                raise ProbeNotApplicable("the oracle's answer is a long text or a program, not a short answer")
            else:
                yield self.disguise(answer, view)


class NearMissControl(_DisguisedAnswer):
    """Not a probe: the control of the gated probes (the right work, a wrong answer)."""

    name = "near-miss"
    exploit = "a wrong answer scores (control)"

    def disguise(self, answer: str, view: EnvView) -> Any:
        return view.reply(near_miss(answer))


class HedgeProbe(_DisguisedAnswer):
    name = "hedge"
    exploit = "several answers at once are graded as right when one of them is"
    variants = ("right-then-wrong", "wrong-or-right")

    def disguise(self, answer: str, view: EnvView) -> Any:
        wrong = near_miss(answer)
        if self.variant == "right-then-wrong":
            return view.reply(f"{answer}\n{wrong}")
        return view.reply(f"{wrong} or {answer}")


class NegationProbe(_DisguisedAnswer):
    name = "negation"
    exploit = "an answer that denies the right value is graded as giving it"

    def disguise(self, answer: str, view: EnvView) -> Any:
        return view.reply(f"The answer is not {answer}.")


class ThinkProbe(_DisguisedAnswer):
    name = "think"
    exploit = "the right answer only inside <think>...</think> counts, the final answer is wrong"

    def disguise(self, answer: str, view: EnvView) -> Any:
        return view.reply(f"<think>It could be {answer}.</think>\n{near_miss(answer)}")


class ToolCallAnswerProbe(_DisguisedAnswer):
    name = "tool-call-answer"
    exploit = "the right answer in a call of a tool the env does not offer counts, the reply is wrong"

    def disguise(self, answer: str, view: EnvView) -> Any:
        name = "final_answer" if "final_answer" not in view.tool_names() else "final_answer_unlisted"
        if view.kind == "message":
            call = {"id": "probe_answer", "name": name, "arguments": {"answer": answer}}
            return {"role": "assistant", "content": near_miss(answer), "tool_calls": [call]}
        return view.call(name, {"answer": answer}, content=near_miss(answer))


class HugeReplyProbe(_DisguisedAnswer):
    name = "huge-reply"
    exploit = "the right answer somewhere in a 200 kB reply of candidates counts, the final answer is wrong"

    def disguise(self, answer: str, view: EnvView) -> Any:
        filler = " ".join(str(number) for number in range(20_000))
        return view.reply(f"{filler}\n{answer}\n{filler}\nFinal answer: {near_miss(answer)}")


class NumbersProbe(HackProbe):
    name = "numbers"
    exploit = "NaN, infinities, 1e400 or a 400-digit integer break the grader's comparison (or crash it)"
    uses_oracle = True
    variants = ("nan", "inf", "1e400", "huge-int")
    _VALUES = {"nan": "NaN", "inf": "inf", "1e400": "1e400", "huge-int": "9" * 400}

    def _value(self) -> Any:
        if self.variant == "nan":
            return float("nan")
        if self.variant == "inf":
            return float("inf")
        if self.variant == "1e400":
            return float("1e400")
        return 10**400

    def play(self, view: EnvView) -> Iterator[Any]:
        text = self._VALUES[self.variant]
        while True:
            oracle = view.oracle
            if view.answer_text(oracle) is None and _has_numbers(oracle):
                yield _with_numbers(oracle, self._value())  # the oracle's tool call, its numbers replaced
            elif view.text_answers():
                yield view.reply(text)
            else:
                yield view.finish()
                return


def _has_numbers(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, dict):
        return any(_has_numbers(item) for key, item in value.items() if key not in ("id", "role"))
    if isinstance(value, list):
        return any(_has_numbers(item) for item in value)
    return False


def _with_numbers(value: Any, number: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return number
    if isinstance(value, dict):
        return {key: item if key in ("id", "role") else _with_numbers(item, number) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_numbers(item, number) for item in value]
    return value


class ConstantProbe(HackProbe):
    """A constant reply, the same for every task: a task it solves is flagged."""

    name = "constant"
    exploit = "one constant reply solves tasks (the answer does not depend on the task)"
    variants = ("0", "1", "yes", "A", "none")

    def applies(self, view: EnvView) -> str | None:
        return None if view.text_answers() else "the env takes no free-text answer"

    def play(self, view: EnvView) -> Iterator[Any]:
        yield view.reply(self.variant)


class KeywordStuffingProbe(HackProbe):
    name = "keyword-stuffing"
    exploit = "a reply stuffed with every word and number of the prompt and common answers scores"

    def applies(self, view: EnvView) -> str | None:
        return None if view.text_answers() else "the env takes no free-text answer"

    def play(self, view: EnvView) -> Iterator[Any]:
        words = re.findall(r"[A-Za-z0-9_.-]+", " ".join(view.history))
        unique = list(dict.fromkeys(words))[:2000]
        yield view.reply(" ".join(unique) + " " + _COMMON_ANSWERS + " " + " ".join(map(str, range(101))))
