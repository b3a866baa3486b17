"""NeMo-RL's ``GenerationInterface``, both ways.

The seed's rollout functions take ``policy_generation``: an object with NeMo-RL's
documented generation interface (``nemo_rl.models.generation.interfaces``)::

    generate(data: BatchedDataDict[GenerationDatumSpec], greedy: bool) -> BatchedDataDict[GenerationOutputSpec]
    # data:   input_ids (B, T) right-padded, input_lengths (B,), stop_strings (B lists or None)
    # output: output_ids (B, T') prompt + generated, right-padded; logprobs (B, T') aligned with
    #         output_ids; generation_lengths (B,); unpadded_sequence_lengths (B,) prompt + generated
    async generate_async(data, greedy) -> async iterator of (sample_index, BatchedDataDict)  # optional
    prepare_for_generation(), finish_generation()

* :class:`GenerationInterfaceSampler` makes such an object (a NeMo-RL ``VllmGeneration``, or
  your own implementation) a rolloutgym :class:`~rolloutgym.llm.BatchSampler`, so it can be
  passed as ``policy_generation`` unchanged: the seed functions in
  :mod:`rolloutgym.llm.rollouts` (and :func:`~rolloutgym.llm.run_multi_turn_rollout`) wrap it
  themselves, with the ``tokenizer`` argument as its renderer.
* :class:`BatchSamplerGeneration` is the reverse: any rolloutgym generation
  (``rolloutgym.make_policy("hf:tiny")``, a ``BatchSampler``) as a ``GenerationInterface``,
  for code that calls ``policy_generation.generate(data, greedy)`` itself.

NeMo-RL's package is heavy (torch, Ray, Megatron), so :class:`GenerationInterface` is a
stand-in with the documented signatures, not an import of it. Tensors are ``torch`` tensors
when torch is installed (NeMo-RL's ``BatchedDataDict`` when NeMo-RL is), else lists.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol.errors import ConfigError, PolicyError

from .generation import BatchSampler, as_batch_sampler
from .renderers import ChatTemplateRenderer
from .sampling import Sample, SamplingParams

__all__ = [
    "BatchSamplerGeneration",
    "GenerationInterface",
    "GenerationInterfaceSampler",
    "is_generation_interface",
    "seed_batch_sampler",
]


class GenerationInterface(abc.ABC):
    """A generation backend with NeMo-RL's documented signature (a stand-in, see the module)."""

    @abc.abstractmethod
    def generate(self, data: Any, greedy: bool) -> Any:
        """Continue every right-padded row of ``data["input_ids"]``; see the module for the shapes."""

    @abc.abstractmethod
    def prepare_for_generation(self, *args: Any, **kwargs: Any) -> Any:
        """Wake the engine (load weights, allocate the KV cache)."""

    @abc.abstractmethod
    def finish_generation(self, *args: Any, **kwargs: Any) -> Any:
        """Let the engine sleep (free its memory for training)."""


def is_generation_interface(value: Any) -> bool:
    """``value`` has NeMo-RL's generation interface and is not already a rolloutgym sampler."""
    return (
        not isinstance(value, type)
        and callable(getattr(value, "generate", None))
        and callable(getattr(value, "prepare_for_generation", None))
        and getattr(value, "renderer", None) is None
    )


def seed_batch_sampler(generation: Any, renderer: Any = None) -> BatchSampler:
    """The batch sampler behind a seed function's ``policy_generation``.

    A NeMo-style ``GenerationInterface`` is wrapped in :class:`GenerationInterfaceSampler`
    with ``renderer`` (the seed's ``tokenizer`` argument); a :class:`BatchSamplerGeneration`
    gives back the sampler behind it; anything else goes to
    :func:`~rolloutgym.llm.as_batch_sampler`.
    """
    if isinstance(generation, BatchSamplerGeneration):
        return generation.sampler
    if is_generation_interface(generation):
        return GenerationInterfaceSampler(generation, renderer)
    return as_batch_sampler(generation, renderer=renderer)


def _rows(values: Any) -> list[Any]:
    return values.tolist() if hasattr(values, "tolist") else [list(v) if isinstance(v, Sequence) else v for v in values]


def _batched(columns: dict[str, Any]) -> Any:
    """``columns`` as NeMo-RL builds them: tensors in a BatchedDataDict where those are installed."""
    try:
        import torch
    except ImportError:
        return columns
    tensors = {
        key: torch.tensor(value, dtype=torch.float32 if key == "logprobs" else torch.long)
        if key != "stop_strings"
        else value
        for key, value in columns.items()
    }
    try:
        from nemo_rl.distributed.batched_data_dict import BatchedDataDict
    except ImportError:
        return tensors
    return BatchedDataDict(tensors)


def _split(output: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per row of a generation output (``output_ids``, ``logprobs``, ``unpadded_sequence_lengths``)."""
    missing = [key for key in ("output_ids", "unpadded_sequence_lengths") if key not in output]
    if missing:
        raise PolicyError(f"the generation's output has no {', '.join(missing)} (NeMo-RL's GenerationOutputSpec)")
    ids, lengths = _rows(output["output_ids"]), _rows(output["unpadded_sequence_lengths"])
    logprobs = output.get("logprobs")
    values = _rows(logprobs) if logprobs is not None else [None] * len(ids)
    return [
        {"output_ids": row, "logprobs": logprob, "unpadded_sequence_lengths": length}
        for row, logprob, length in zip(ids, values, lengths, strict=True)
    ]


def _stop_reason(tokens: Sequence[int], text: str, params: SamplingParams) -> str:
    if tokens and tokens[-1] in params.stop_token_ids:
        return "stop"
    if any(stop and text.endswith(stop) for stop in params.stop):
        return "stop"
    return "length"


class GenerationInterfaceSampler:
    """A NeMo-RL-style ``GenerationInterface`` as a rolloutgym :class:`~rolloutgym.llm.BatchSampler`.

    Each wave goes to ``generation.generate(data, greedy)`` in one call (or, with
    ``use_generate_async=True``, through ``generate_async``, which hands back each sample
    when it is done). Generation lengths and stop tokens are the engine's own config, as
    in NeMo-RL; a row that runs past the loop's ``max_tokens`` (the room left under
    ``max_seq_len``) is cut there and reported as ``stop_reason="length"``.

    Args:
        generation: the NeMo-style generation object.
        tokenizer: its model's Hugging Face tokenizer (rendered with
            :class:`~rolloutgym.llm.ChatTemplateRenderer`) or a rolloutgym ``Renderer``.
        use_generate_async: send calls through ``generate_async``.
    """

    def __init__(self, generation: Any, tokenizer: Any, *, use_generate_async: bool = False) -> None:
        if not callable(getattr(generation, "generate", None)):
            raise ConfigError(f"{type(generation).__name__} has no generate(data, greedy): not a GenerationInterface")
        if tokenizer is None:
            raise ConfigError(
                f"{type(generation).__name__} is a NeMo-style GenerationInterface: pass its tokenizer "
                "(the seed's 'tokenizer' argument) so the loop can render chat messages into its tokens"
            )
        if use_generate_async and not callable(getattr(generation, "generate_async", None)):
            raise ConfigError(f"{type(generation).__name__} has no generate_async(data, greedy)")
        self.generation = generation
        self.renderer = (
            tokenizer if callable(getattr(tokenizer, "render_prompt", None)) else ChatTemplateRenderer(tokenizer)
        )
        pad = getattr(getattr(self.renderer, "tokenizer", tokenizer), "pad_token_id", None)
        self.pad_token_id = pad if isinstance(pad, int) else 0
        self.use_generate_async = use_generate_async
        self.name = type(generation).__name__
        self.max_tokens = 2**31 - 1  # the engine's own config bounds a turn (max_new_tokens), as in NeMo-RL

    def _data(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> Any:
        width = max((len(prompt) for prompt in prompts), default=0)
        return _batched(
            {
                "input_ids": [list(p) + [self.pad_token_id] * (width - len(p)) for p in prompts],
                "input_lengths": [len(prompt) for prompt in prompts],
                "stop_strings": [list(item.stop) or None for item in params],
            }
        )

    async def _outputs(self, data: Any, greedy: bool, count: int) -> list[dict[str, Any]]:
        """Each row's ``output_ids``, ``logprobs`` and ``unpadded_sequence_lengths`` (row by row when async)."""
        if not self.use_generate_async:
            call = self.generation.generate
            if inspect.iscoroutinefunction(call):
                output = await call(data, greedy)
            else:
                output = await asyncio.to_thread(call, data, greedy)
            rows = _split(output)
            if len(rows) != count:
                raise PolicyError(f"{self.name}.generate gave {len(rows)} rows for {count} prompts")
            return rows
        found: dict[int, dict[str, Any]] = {}
        async for index, output in self.generation.generate_async(data, greedy):
            found[int(index)] = _split(output)[0]
        missing = sorted(set(range(count)) - set(found))
        if missing:
            raise PolicyError(f"{self.name}.generate_async gave no output for rows {missing}")
        return [found[row] for row in range(count)]

    async def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        if not prompts:
            return []
        greedy = all(item.greedy for item in params)
        outputs = await self._outputs(self._data(prompts, params), greedy, len(prompts))
        samples = []
        for prompt, item, output in zip(prompts, params, outputs, strict=True):
            start, end = len(prompt), int(output["unpadded_sequence_lengths"])
            tokens = [int(token) for token in output["output_ids"][start:end]]
            logprobs = output.get("logprobs")
            values = [float(value) for value in logprobs[start:end]] if logprobs is not None else None
            cut = len(tokens) > item.max_tokens
            tokens, values = tokens[: item.max_tokens], None if values is None else values[: item.max_tokens]
            reason = "length" if cut else _stop_reason(tokens, self.renderer.decode(tokens), item)
            prompt_ids = tuple(int(token) for token in output["output_ids"][:start])
            samples.append(Sample(tuple(tokens), None if values is None else tuple(values), reason, prompt_ids))
        return samples


class BatchSamplerGeneration(GenerationInterface):
    """Any rolloutgym generation as a NeMo-RL-style ``GenerationInterface``.

    ``generate(data, greedy)`` samples every row of ``data`` (``input_ids``,
    ``input_lengths``, optional ``stop_strings``) through the batch sampler and returns
    NeMo-RL's output columns (``output_ids``, ``logprobs``, ``generation_lengths``,
    ``unpadded_sequence_lengths``), right-padded with the sampler's pad token.

    Args:
        generation: a ``TokenPolicy`` (``rolloutgym.make_policy("hf:tiny")``) or a ``BatchSampler``.
        max_new_tokens, temperature, top_p: the generation config (default: the policy's).
    """

    def __init__(
        self,
        generation: Any,
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
    ) -> None:
        self.sampler = as_batch_sampler(generation)
        self.renderer = self.sampler.renderer
        self.max_new_tokens = int(max_new_tokens or getattr(generation, "max_tokens", 512))
        self.temperature = float(temperature if temperature is not None else getattr(generation, "temperature", 1.0))
        self.top_p = float(top_p if top_p is not None else getattr(generation, "top_p", 1.0))
        pad = getattr(self.sampler, "pad_token_id", None)
        self.pad_token_id = pad if isinstance(pad, int) else 0

    def prepare_for_generation(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def finish_generation(self, *args: Any, **kwargs: Any) -> bool:
        return True

    async def _generate(self, data: Mapping[str, Any], greedy: bool) -> Any:
        rows, lengths = _rows(data["input_ids"]), [int(n) for n in _rows(data["input_lengths"])]
        stops = data.get("stop_strings") or [None] * len(rows)
        prompts = [[int(t) for t in row[:length]] for row, length in zip(rows, lengths, strict=True)]
        params = [
            SamplingParams(
                max_tokens=self.max_new_tokens,
                temperature=0.0 if greedy else self.temperature,
                top_p=self.top_p,
                stop=tuple(stop or ()),
                stop_token_ids=tuple(self.renderer.stop_token_ids),
            )
            for stop in stops
        ]
        result = self.sampler.generate(prompts, params)
        samples = list(await result if inspect.isawaitable(result) else result)
        full = [prompt + list(sample.token_ids) for prompt, sample in zip(prompts, samples, strict=True)]
        width = max((len(row) for row in full), default=0)
        logprobs = [
            [0.0] * len(prompt) + list(sample.logprobs or [0.0] * len(sample.token_ids))
            for prompt, sample in zip(prompts, samples, strict=True)
        ]
        return _batched(
            {
                "output_ids": [row + [self.pad_token_id] * (width - len(row)) for row in full],
                "logprobs": [row + [0.0] * (width - len(row)) for row in logprobs],
                "generation_lengths": [len(sample.token_ids) for sample in samples],
                "unpadded_sequence_lengths": [len(row) for row in full],
            }
        )

    def generate(self, data: Any, greedy: bool = False) -> Any:
        """NeMo-RL's ``generate``: runs its own event loop (inside one, ``await generate_async_batch``)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._generate(data, greedy))
        raise RuntimeError("generate() runs its own event loop; inside a running loop, await generate_async_batch()")

    async def generate_async_batch(self, data: Any, greedy: bool = False) -> Any:
        """``generate`` as a coroutine, for callers inside an event loop."""
        return await self._generate(data, greedy)

    async def generate_async(self, data: Any, greedy: bool = False) -> Any:
        """NeMo-RL's ``generate_async``: ``(row index, one-row output)`` for each row as it finishes."""
        rows, lengths = _rows(data["input_ids"]), _rows(data["input_lengths"])
        stops = data.get("stop_strings") or [None] * len(rows)

        async def one(index: int) -> tuple[int, Any]:
            single = {"input_ids": [rows[index]], "input_lengths": [lengths[index]], "stop_strings": [stops[index]]}
            return index, await self._generate(single, greedy)

        for done in asyncio.as_completed([one(index) for index in range(len(rows))]):
            yield await done
