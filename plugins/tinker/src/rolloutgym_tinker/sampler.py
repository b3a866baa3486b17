"""A token-level :class:`~rolloutgym.llm.Sampler` over ``tinker.SamplingClient``.

Prompts are sent as ``tinker.ModelInput.from_ints(token_ids)`` with ``tinker.SamplingParams``;
the sampled tokens and logprobs of ``SampleResponse.sequences[0]`` are returned verbatim.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from rolloutgym.llm import Sample, SamplingParams
from rolloutgym_protocol.errors import PolicyError

from .client import import_tinker

__all__ = ["TinkerSampler"]


class TinkerSampler:
    """Samples one continuation per call with ``SamplingClient.sample_async``.

    Args:
        sampling_client: a ``tinker.SamplingClient`` (see :func:`create_sampling_client`).
        timeout: seconds one sample may take (None: no limit).
        token_text: token id -> its text; needed only when a turn has both stop strings and
            stop token ids (Tinker takes one kind), to send the ids as strings.
    """

    def __init__(
        self,
        sampling_client: Any,
        *,
        timeout: float | None = 600.0,
        token_text: Callable[[int], str] | None = None,
    ) -> None:
        self.sampling_client = sampling_client
        self.timeout = timeout
        self.token_text = token_text
        self._tinker = import_tinker()

    def stop_value(self, params: SamplingParams) -> list[str] | list[int] | None:
        """The ``stop`` field: token ids, strings, or both as strings."""
        strings, ids = list(params.stop), [int(token) for token in params.stop_token_ids]
        if strings and ids:
            if self.token_text is None:
                raise PolicyError(
                    "Tinker takes stop strings or stop token ids, not both; give TinkerSampler a token_text "
                    "function so the end-of-turn ids can be sent as strings"
                )
            return strings + [self.token_text(token) for token in ids]
        return strings or ids or None

    def tinker_params(self, params: SamplingParams) -> Any:
        """The ``tinker.SamplingParams`` of one turn."""
        return self._tinker.SamplingParams(
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            seed=params.seed,
            stop=self.stop_value(params),
            **dict(params.extra),
        )

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """Sample one continuation of ``prompt_token_ids``."""
        prompt = self._tinker.ModelInput.from_ints([int(token) for token in prompt_token_ids])
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(
                self.sampling_client.sample_async(
                    prompt=prompt, num_samples=1, sampling_params=self.tinker_params(params)
                ),
                self.timeout,
            )
        except TimeoutError:
            raise PolicyError(
                f"Tinker did not return a sample within {self.timeout:g} s; raise --policy-arg sample_timeout=SECONDS"
            ) from None
        except PolicyError:
            raise
        except Exception as exc:  # the SDK's errors (HTTP, quota, server) end this episode
            raise PolicyError(f"Tinker sampling failed: {type(exc).__name__}: {str(exc)[:400]}") from None
        sequences = getattr(response, "sequences", None)
        if not sequences:
            raise PolicyError(f"Tinker answered without a sampled sequence: {response!r:.300}")
        sequence = sequences[0]
        tokens = tuple(int(token) for token in sequence.tokens)
        logprobs = sequence.logprobs
        info: dict[str, Any] = {"latency_s": round(time.perf_counter() - started, 6)}
        sequence_id = getattr(sequence, "sequence_id", None)
        if sequence_id:
            info["sequence_id"] = sequence_id
        return Sample(
            token_ids=tokens,
            logprobs=tuple(float(value) for value in logprobs)
            if logprobs is not None and len(logprobs) == len(tokens)
            else None,
            stop_reason="length" if sequence.stop_reason == "length" else "stop",
            info=info,
        )
