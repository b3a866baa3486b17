"""``LLMGrader``: grade by asking a language model, with your own prompt and parser.

The grader is three small callables::

    grader = LLMGrader(
        render=lambda answer, rubric: [{"role": "user", "content": f"Grade: {answer}"}],
        sample=client_call,            # chat -> str, or an async function chat -> str
        parse=lambda text, rubric: float(text.strip()),
    )

``grader(input, rubric)`` fits every place a :class:`~rolloutgym_protocol.Grader` fits
(:class:`~rolloutgym.graders.CompositeGrader`, the grading wrappers): with a synchronous
sampler it returns a :class:`Score`, with an asynchronous one it returns an awaitable Score.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Generic, TypeVar

from rolloutgym_protocol import Chat, Score, ScoreValue

from ._common import discard_awaitable, is_awaitable, to_score, with_rubric_metadata

__all__ = ["LLMGrader"]

Renderer = Callable[[Any, Any], Chat]
Sampler = Callable[[Chat], "str | Awaitable[str]"]
Parser = Callable[[str, Any], ScoreValue]


class _ParsedScore:
    """An awaitable Score: awaits the pending sample, then parses it.

    ``close()`` releases the pending sample without running it, so a caller that cannot
    await (a synchronous composite grader) leaves no "never awaited" coroutine behind.
    """

    __slots__ = ("_finish", "_pending")

    def __init__(self, pending: Awaitable[Any], finish: Callable[[Any], Score]) -> None:
        self._pending = pending
        self._finish = finish

    def __await__(self) -> Generator[Any, None, Score]:
        return self._resolve().__await__()

    async def _resolve(self) -> Score:
        return self._finish(await self._pending)

    def close(self) -> None:
        """Release the pending sample without awaiting it."""
        discard_awaitable(self._pending)


InputT = TypeVar("InputT")
RubricT = TypeVar("RubricT")


class LLMGrader(Generic[InputT, RubricT]):
    """Grades by rendering a prompt, sampling a model and parsing its answer.

    Args:
        sample: ``sample(chat) -> str``, synchronous or asynchronous.
        render: ``render(input, rubric) -> chat`` (a list of message dicts).
        parse: ``parse(text, rubric) -> float | Score``.
        metadata: copied into every Score; metadata returned by ``parse`` overrides it.

    Every Score also carries ``rubric_fingerprint`` and ``rubric_id`` when the rubric is a
    :class:`~rolloutgym_protocol.Rubric`.
    """

    def __init__(
        self,
        *,
        sample: Sampler,
        render: Renderer,
        parse: Parser,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        for name, function in (("sample", sample), ("render", render), ("parse", parse)):
            if not callable(function):
                raise TypeError(f"LLMGrader {name} must be callable, got {type(function).__name__}")
        self.sample = sample
        self.render = render
        self.parse = parse
        self.metadata: dict[str, Any] = dict(metadata or {})

    def _finish(self, text: Any, rubric: Any) -> Score:
        if not isinstance(text, str):
            raise TypeError(f"LLM grader sample callable must return a string, got {type(text).__name__}")
        parsed = to_score(self.parse(text, rubric), "LLM grader parse callable did not return a numeric score")
        return with_rubric_metadata(parsed, rubric, self.metadata)

    def __call__(self, input: Any, rubric: Any) -> Score | Awaitable[Score]:
        """Grade ``input``: a Score with a sync sampler, an awaitable Score with an async one."""
        sampled = self.sample(self.render(input, rubric))
        if is_awaitable(sampled):
            return _ParsedScore(sampled, lambda text: self._finish(text, rubric))
        return self._finish(sampled, rubric)

    def score(self, input: Any, rubric: Any) -> Score:
        """Grade ``input`` with a synchronous sampler.

        Raises:
            TypeError: the sampler returned an awaitable (use :meth:`ascore`), the sample is
                not a string, or ``parse`` did not return a number or Score.
        """
        sampled = self.sample(self.render(input, rubric))
        if is_awaitable(sampled):
            discard_awaitable(sampled)
            raise TypeError("LLM grader returned an awaitable; use ascore()")
        return self._finish(sampled, rubric)

    async def ascore(self, input: Any, rubric: Any) -> Score:
        """Grade ``input`` with a synchronous or asynchronous sampler."""
        sampled = self.sample(self.render(input, rubric))
        if is_awaitable(sampled):
            sampled = await sampled
        return self._finish(sampled, rubric)
