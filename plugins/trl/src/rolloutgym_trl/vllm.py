"""rolloutgym's LLM loop on TRL's vLLM backend (``GRPOConfig(use_vllm=True)``, server or colocate mode).

:class:`TRLVLLMBatchSampler` is a :class:`rolloutgym.llm.BatchSampler`: each wave of the
batched loop (every still-running episode's next turn) goes to vLLM in one call, through
the objects TRL's ``GRPOTrainer`` already made (``trainer.vllm_generation``), whose weights
TRL syncs before each rollout call:

* **server mode** (``trl vllm-serve``): ``vllm_client.generate(prompts=[token ids...], ...)``,
  TRL's client of vLLM's OpenAI-compatible ``/v1/completions`` endpoint with
  ``return_token_ids`` (completion token ids and the sampled token's logprob come back).
  One request per distinct set of sampling options in the wave (vLLM takes one set per
  request); rows that differ only in their seed share a request and the seed is not sent
  (vLLM's batched sampling is not seed-exact per row anyway).
* **colocate mode**: the in-process ``vllm.LLM``: ``llm.generate([{"prompt_token_ids": ...}],
  sampling_params=[one per row])``, per-row seeds included.

Either way the rules of :class:`rolloutgym.llm.Sampler` hold per row: the sample stops after
a stop token id or after the token completing a stop string (kept), else it ends with
``stop_reason="length"`` at ``max_tokens``; logprobs are vLLM's (``logprobs=0``: the
sampled token's).

No GPU and no vLLM here: ``plugins/trl/tests/test_vllm_sampler.py`` checks server mode
against a local HTTP server speaking vLLM's documented ``/v1/completions`` response
(``choices[].token_ids``, ``prompt_token_ids``, ``logprobs`` with ``token_id:N`` tokens)
through TRL's real ``VLLMClient``, and colocate mode against a stand-in with ``LLM.generate``'s
documented signature and ``RequestOutput`` fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rolloutgym.llm import Renderer, Sample, SamplingParams
from rolloutgym_protocol.errors import ConfigError

__all__ = ["TRLVLLMBatchSampler"]


def _vllm_sampling_params(**options: Any) -> Any:
    from vllm import SamplingParams as VLLMSamplingParams

    return VLLMSamplingParams(**options)


class TRLVLLMBatchSampler:
    """A :class:`~rolloutgym.llm.BatchSampler` over TRL's vLLM backend (module docstring).

    Args:
        renderer: the trained model's renderer (for stop strings and the loop's prompts).
        client: TRL's ``VLLMClient`` (server mode), or None.
        llm: a ``vllm.LLM`` (colocate mode), or None. Exactly one of the two.
        sampling_params: builds a colocate request's sampling parameters (default:
            ``vllm.SamplingParams``).
        pad_token_id: the id padding the loop's ``input_ids``.
    """

    def __init__(
        self,
        renderer: Renderer,
        *,
        client: Any = None,
        llm: Any = None,
        sampling_params: Callable[..., Any] | None = None,
        pad_token_id: int = 0,
    ) -> None:
        if (client is None) == (llm is None):
            raise ConfigError("TRLVLLMBatchSampler needs exactly one of client= (server mode) or llm= (colocate mode)")
        self.renderer = renderer
        self.client = client
        self.llm = llm
        self.sampling_params = sampling_params or _vllm_sampling_params
        self.pad_token_id = pad_token_id
        self.name = "trl-vllm"
        self.requests = 0  # calls made to vLLM, for inspection

    @classmethod
    def from_trainer(cls, trainer: Any, renderer: Renderer) -> TRLVLLMBatchSampler:
        """The sampler over ``trainer.vllm_generation`` (a GRPOTrainer built with ``use_vllm=True``)."""
        generation = getattr(trainer, "vllm_generation", None)
        if generation is None:
            raise ConfigError("use_vllm is on but the trainer has no vllm_generation; is vLLM installed?")
        pad = getattr(trainer.processing_class, "pad_token_id", None)
        pad = pad if isinstance(pad, int) else 0
        if getattr(generation, "mode", None) == "server":
            return cls(renderer, client=generation.vllm_client, pad_token_id=pad)
        return cls(renderer, llm=generation.llm, pad_token_id=pad)

    def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        """Sample ``prompts[i]`` with ``params[i]``: one vLLM call (colocate) or one per option set (server)."""
        if len(prompts) != len(params):
            raise ValueError(f"got {len(prompts)} prompts and {len(params)} sampling params")
        if not prompts:
            return []
        rows = [list(prompt) for prompt in prompts]
        if self.client is not None:
            raw = self._server(rows, list(params))
        else:
            raw = self._colocate(rows, list(params))
        return [
            self._sample(row, item, tokens, logprobs)
            for row, item, (tokens, logprobs) in zip(rows, params, raw, strict=True)
        ]

    @staticmethod
    def _options(item: SamplingParams) -> dict[str, Any]:
        return {
            "temperature": 0.0 if item.greedy else float(item.temperature),
            "top_p": float(item.top_p),
            "max_tokens": int(item.max_tokens),
        }

    def _server(self, rows: list[list[int]], params: list[SamplingParams]) -> list[tuple[list[int], list[float]]]:
        batches: dict[tuple[Any, ...], list[int]] = {}
        for index, item in enumerate(params):
            options = self._options(item)
            key = (*options.values(), tuple(item.stop_token_ids), tuple(item.stop))
            batches.setdefault(key, []).append(index)
        results: list[tuple[list[int], list[float]]] = [([], [])] * len(rows)
        for indices in batches.values():
            item = params[indices[0]]
            extra = {"stop_token_ids": list(item.stop_token_ids)}
            if item.stop:
                extra.update(stop=list(item.stop), include_stop_str_in_output=True)
            self.requests += 1
            output = self.client.generate(
                prompts=[rows[index] for index in indices],
                n=1,
                logprobs=0,
                generation_kwargs=extra,
                **self._options(item),
            )
            logprobs = output.get("logprobs") or [None] * len(indices)
            for position, index in enumerate(indices):
                tokens = [int(token) for token in output["completion_ids"][position]]
                per_token = logprobs[position] or [[0.0]] * len(tokens)
                results[index] = (tokens, [float(entry[0] if entry[0] is not None else 0.0) for entry in per_token])
        return results

    def _colocate(self, rows: list[list[int]], params: list[SamplingParams]) -> list[tuple[list[int], list[float]]]:
        requests = []
        for item in params:
            options = {**self._options(item), "logprobs": 0, "stop_token_ids": list(item.stop_token_ids)}
            if item.stop:
                options.update(stop=list(item.stop), include_stop_str_in_output=True)
            if item.seed is not None:
                options["seed"] = int(item.seed)
            requests.append(self.sampling_params(**options))
        self.requests += 1
        outputs = self.llm.generate(
            [{"prompt_token_ids": row} for row in rows], sampling_params=requests, use_tqdm=False
        )
        results = []
        for output in outputs:
            completion = output.outputs[0]
            tokens = [int(token) for token in completion.token_ids]
            logprobs = []
            for token, entry in zip(tokens, completion.logprobs or [{}] * len(tokens), strict=False):
                found = entry.get(token) if isinstance(entry, dict) else None
                logprobs.append(float(getattr(found, "logprob", 0.0)) if found is not None else 0.0)
            results.append((tokens, logprobs))
        return results

    def _sample(self, prompt: list[int], item: SamplingParams, tokens: list[int], logprobs: list[float]) -> Sample:
        """The loop's Sample: cut after a stop token id or the token completing a stop string; else length."""
        stop_ids = set(item.stop_token_ids)
        logprobs = (logprobs + [0.0] * len(tokens))[: len(tokens)]
        for end in range(1, len(tokens) + 1):
            if tokens[end - 1] in stop_ids or (
                item.stop and any(text in self.renderer.decode(tokens[:end]) for text in item.stop)
            ):
                return Sample(tuple(tokens[:end]), tuple(logprobs[:end]), "stop", tuple(prompt), {"model": self.name})
        tokens, logprobs = tokens[: item.max_tokens], logprobs[: item.max_tokens]
        return Sample(tuple(tokens), tuple(logprobs), "length", tuple(prompt), {"model": self.name})
