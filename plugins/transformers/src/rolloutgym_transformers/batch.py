"""Batched generation over a local transformers model, for :func:`rolloutgym.llm.run_multi_turn_rollout`.

:class:`TransformersBatchSampler` samples one continuation for every prompt of a wave as
one padded batch. Prompts of equal length are prefilled together; their KV caches are
left-padded to the longest prompt and stacked, and from then on each decoding step is one
forward pass for all rows still sampling (attention mask over the padding, position ids
per row). A row leaves the batch (and the KV cache) once it stops, so late steps only
pay for the rows that are still generating. (Prefilling a padded batch in one pass would
need a full attention mask, which CPU attention kernels run several times slower than
the unmasked causal path.)

Each row follows the rules of the per-request :class:`~rolloutgym_transformers.TransformersSampler`
exactly (it reuses its token picking and stop-string check): its own ``max_tokens``, stop
token ids and stop strings (kept in the sample), its logprob from the raw logits, and its
own ``torch.Generator`` when it has a seed, so a seeded or greedy row samples the same
tokens whatever else is in the batch (up to float rounding of padded attention).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from rolloutgym.llm import ChatTemplateRenderer, Renderer, Sample, SamplingParams
from rolloutgym.runner.activity import count_tokens
from transformers import DynamicCache

if TYPE_CHECKING:
    from .sampler import TransformersSampler

__all__ = ["TransformersBatchSampler"]


class TransformersBatchSampler:
    """A :class:`~rolloutgym.llm.BatchSampler` over a causal LM (one ``generate`` call at a time).

    Args:
        sampler: the per-request sampler of the same model (its lock, RNG and picking
            rules are shared, so both can serve one model).
        renderer: the model's renderer (default: ``ChatTemplateRenderer(tokenizer)``).

    Build it with ``TransformersSampler(...).batch_sampler(renderer)``, or let
    ``run_multi_turn_rollout(rolloutgym.make_policy("hf:tiny"), ...)`` do it.
    """

    def __init__(self, sampler: TransformersSampler, renderer: Renderer | None = None) -> None:
        self.sampler = sampler
        self.renderer = renderer or ChatTemplateRenderer(sampler.tokenizer)
        tokenizer = sampler.tokenizer
        pad = getattr(tokenizer, "pad_token_id", None)
        if not isinstance(pad, int):
            pad = getattr(tokenizer, "eos_token_id", None)
        self.pad_token_id = pad if isinstance(pad, int) else 0
        self.name = sampler.name
        self.batch_sizes: list[int] = []  # one entry per generate() call, for inspection

    def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        """Sample ``prompts[i]`` with ``params[i]`` for every ``i``, in one padded batch."""
        if len(prompts) != len(params):
            raise ValueError(f"got {len(prompts)} prompts and {len(params)} sampling params")
        if not prompts:
            return []
        if any(not prompt for prompt in prompts):
            raise ValueError("cannot sample from an empty prompt")
        with self.sampler._lock, torch.inference_mode():
            self.batch_sizes.append(len(prompts))
            return self._generate([list(prompt) for prompt in prompts], list(params))

    def _forward(self, arguments: dict[str, Any]) -> tuple[torch.Tensor, Any]:
        output = self.sampler.model(**arguments)
        cache = getattr(output, "cache", None)
        if cache is None:
            cache = output.past_key_values
        return output.logits[:, -1].float(), cache

    def _prefill(self, prompts: list[list[int]]) -> tuple[list[int], torch.Tensor, Any]:
        """Prefill every prompt and return ``(rows, last_logits, cache)`` for decoding.

        Prompts of equal length are prefilled together without a mask (the fast causal
        attention path; a padded prefill would need a full attention mask, which CPU
        attention kernels handle far more slowly); their caches are then left-padded to
        the longest prompt and stacked, so decoding runs as one batch. ``rows`` maps each
        batch position to its prompt.
        """
        sampler = self.sampler
        device = sampler.device
        width = max(len(prompt) for prompt in prompts)
        groups: dict[int, list[int]] = {}
        for row, prompt in enumerate(prompts):
            groups.setdefault(len(prompt), []).append(row)
        rows: list[int] = []
        logits_parts: list[torch.Tensor] = []
        layers: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = []
        for length, members in groups.items():
            input_ids = torch.tensor([prompts[row] for row in members], dtype=torch.long, device=device)
            logits, cache = self._forward({"input_ids": input_ids, "use_cache": True})
            rows.extend(members)
            logits_parts.append(logits)
            for index, layer in enumerate(cache.layers):
                if index == len(layers):
                    layers.append(([], []))
                padding = (0, 0, width - length, 0)  # left-pad the sequence dimension
                layers[index][0].append(torch.nn.functional.pad(layer.keys, padding))
                layers[index][1].append(torch.nn.functional.pad(layer.values, padding))
        stacked = [(torch.cat(keys), torch.cat(values)) for keys, values in layers]
        return rows, torch.cat(logits_parts), DynamicCache(stacked, config=sampler.model.config)

    def _generate(self, prompts: list[list[int]], params: list[SamplingParams]) -> list[Sample]:
        started = time.perf_counter()
        sampler = self.sampler
        device = sampler.device
        count = len(prompts)
        width = max(len(prompt) for prompt in prompts)
        rows, logits, cache = self._prefill(prompts)
        mask = torch.zeros((count, width), dtype=torch.long, device=device)
        for position, row in enumerate(rows):
            mask[position, width - len(prompts[row]) :] = 1
        positions = torch.tensor([[len(prompts[row]) - 1] for row in rows], dtype=torch.long, device=device)
        generators = []
        for item in params:
            if item.seed is None:
                generators.append(sampler._default_generator)
            else:
                generator = torch.Generator(device="cpu")
                generator.manual_seed(int(item.seed))
                generators.append(generator)
        stop_ids = [set(item.stop_token_ids) for item in params]
        windows = [max((len(text) for text in item.stop), default=0) + 2 for item in params]
        all_greedy = all(item.greedy for item in params)
        tokens: list[list[int]] = [[] for _ in range(count)]
        logprobs: list[list[float]] = [[] for _ in range(count)]
        reasons = ["length"] * count
        while True:
            log_probabilities = torch.log_softmax(logits, dim=-1)
            if all_greedy:
                chosen = torch.argmax(logits, dim=-1).tolist()
            else:
                chosen = [
                    sampler._pick(logits[position], params[row], generators[row]) for position, row in enumerate(rows)
                ]
            picked = log_probabilities.gather(1, torch.tensor(chosen, device=logits.device)[:, None])[:, 0].tolist()
            keep = []
            count_tokens(len(rows))
            for position, row in enumerate(rows):
                token = chosen[position]
                tokens[row].append(token)
                logprobs[row].append(picked[position])
                item = params[row]
                if token in stop_ids[row] or (
                    item.stop and sampler._hits_stop_string(tokens[row], item.stop, windows[row])
                ):
                    reasons[row] = "stop"
                elif len(tokens[row]) < item.max_tokens:
                    keep.append(position)
            if not keep:
                break
            if len(keep) < len(rows):  # finished rows leave the batch and the cache
                selected = torch.tensor(keep, dtype=torch.long, device=device)
                cache.batch_select_indices(selected)
                mask = mask.index_select(0, selected)
                positions = positions.index_select(0, selected)
                chosen = [chosen[position] for position in keep]
                rows = [rows[position] for position in keep]
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
            positions = positions + 1
            logits, cache = self._forward(
                {
                    "input_ids": torch.tensor(chosen, dtype=torch.long, device=device)[:, None],
                    "attention_mask": mask,
                    "position_ids": positions,
                    sampler._cache_argument: cache,
                    "use_cache": True,
                }
            )
        info: dict[str, Any] = {"seconds": round(time.perf_counter() - started, 6), "batch_size": count}
        if sampler.name:
            info["model"] = sampler.name
        return [
            Sample(tuple(tokens[row]), tuple(logprobs[row]), reasons[row], tuple(prompts[row]), info)
            for row in range(count)
        ]
