"""Offline stand-ins for tests: a sampling client that answers with scripted tokens, and a tiny tokenizer.

:class:`StandInSamplingClient` takes the place of ``tinker.SamplingClient`` (the remote
service) and speaks the SDK's own types: it receives a ``tinker.ModelInput`` and
``tinker.SamplingParams`` and answers a ``tinker.types.SampleResponse`` of
``SampledSequence``\\ s, honouring ``max_tokens`` and integer ``stop`` tokens as the service does.
:func:`byte_tokenizer` builds a byte-level Hugging Face tokenizer in code (no download)
with the ChatML/Qwen special tokens, so real tinker-cookbook renderers work offline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rolloutgym.install_hints import pip_install

__all__ = ["StandInSamplingClient", "byte_tokenizer"]


def byte_tokenizer() -> Any:
    """A byte-level Hugging Face tokenizer with the ChatML/Qwen special tokens, built in code (no download).

    It is rolloutgym-testing's (the test extra), which needs ``transformers`` and ``tokenizers``.
    """
    try:
        from rolloutgym_testing.tokenizers import byte_tokenizer as build
    except ImportError as error:
        raise ImportError(
            f"byte_tokenizer comes from rolloutgym-testing, which is not importable here ({error}); "
            f"install the test extra: {pip_install('rolloutgym-tinker', 'test')}"
        ) from error
    return build()


class StandInSamplingClient:
    """Answers ``sample_async`` with scripted token ids, in the Tinker SDK's types.

    Args:
        replies: token-id continuations used in order (cycled), or
            ``reply(prompt_token_ids, call_index) -> token ids``.
        logprob: the logprob reported for each sampled token.

    Attributes:
        prompts: the prompt token ids received, in order.
        params: the ``tinker.SamplingParams`` received, in order.
    """

    def __init__(
        self, replies: Sequence[Sequence[int]] | Callable[[list[int], int], Sequence[int]], *, logprob: float = -0.25
    ) -> None:
        import tinker

        self._tinker = tinker
        self.replies = replies
        self.logprob = logprob
        self.prompts: list[list[int]] = []
        self.params: list[Any] = []

    async def sample_async(self, prompt: Any, num_samples: int, sampling_params: Any, **options: Any) -> Any:
        types = self._tinker.types
        if not isinstance(prompt, self._tinker.ModelInput) or not isinstance(
            sampling_params, self._tinker.SamplingParams
        ):
            raise TypeError("sample_async takes a tinker.ModelInput and tinker.SamplingParams")
        tokens_in = prompt.to_ints()
        index = len(self.prompts)
        self.prompts.append(tokens_in)
        self.params.append(sampling_params)
        reply = self.replies(tokens_in, index) if callable(self.replies) else self.replies[index % len(self.replies)]
        stops = sampling_params.stop if isinstance(sampling_params.stop, (list, tuple)) else []
        stop_ids = {stop for stop in stops if isinstance(stop, int)}
        sequences = []
        for number in range(num_samples):
            tokens: list[int] = []
            reason = "length"
            for token in reply:
                if len(tokens) == (sampling_params.max_tokens or len(reply)):
                    break
                tokens.append(int(token))
                if token in stop_ids:
                    reason = "stop"
                    break
            else:
                reason = "stop"
            sequences.append(
                types.SampledSequence(
                    stop_reason=reason,
                    sequence_id=f"seq-{index}-{number}",
                    _tokens_list=tokens,
                    _logprobs_list=[self.logprob] * len(tokens),
                )
            )
        return types.SampleResponse(sequences=sequences)
