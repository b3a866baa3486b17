"""The ``hf`` policy provider: ``--policy hf:MODEL``.

Options (``--policy-arg KEY=VALUE``): ``max_tokens`` (per turn; 512, or 32 for ``tiny``),
``max_seq_len`` (default: the model's context length), ``max_turns``, ``temperature``
(1.0), ``greedy``, ``top_p``, ``stop`` (a list of strings), ``seed``, ``keep_thinking``,
``device`` (``auto``/``cpu``/``cuda``), ``dtype`` (``float32``/``bfloat16``/...),
``chat_template`` (a Jinja template replacing the tokenizer's), ``tool_prompt``
(``auto``/``template``/``system``), ``threads`` (torch CPU threads for the whole process;
``1`` is much faster on a machine whose cores are busy with other work; ``smollm2`` and ``tiny`` use 1
unless told otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rolloutgym.llm import TokenPolicy
from rolloutgym_protocol.errors import ConfigError

__all__ = ["TransformersPolicy", "make_batch_sampler", "make_policy"]

SINGLE_THREAD_MODELS = frozenset({"tiny", "smollm2"})
"""Shipped models small enough that one CPU thread decodes them fastest (the ``threads`` option overrides)."""


class TransformersPolicy(TokenPolicy):
    """A :class:`~rolloutgym.llm.TokenPolicy` over a local transformers model.

    Build it with :func:`make_policy` (or ``rolloutgym.make_policy("hf:tiny")``); the
    loaded model is shared by every policy of the process that names the same model.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        dtype: str | None = None,
        chat_template: str | None = None,
        tool_prompt: str = "auto",
        max_tokens: int | None = None,
        max_seq_len: int | None = None,
        threads: int | None = None,
        **options: Any,
    ) -> None:
        from rolloutgym.llm import ChatTemplateRenderer

        from ._models import load_model
        from .sampler import TransformersSampler

        if threads is None and model in SINGLE_THREAD_MODELS:
            # A small model only loses time to intra-op threading: decoding SmolLM2-135M took 4.5 s of CPU
            # for 64 tokens on one thread and 39 s on two on a busy 2-core machine (OpenMP threads spin
            # while their partner waits for a core); a 64-wide model gains nothing either.
            threads = 1
        if threads is not None:
            import torch

            if int(threads) < 1:
                raise ConfigError(f"threads must be at least 1, got {threads}")
            torch.set_num_threads(int(threads))
        self.loaded = load_model(model, device=device, dtype=dtype)
        renderer = ChatTemplateRenderer(self.loaded.tokenizer, chat_template=chat_template, tool_prompt=tool_prompt)
        sampler = TransformersSampler(
            self.loaded.model, self.loaded.tokenizer, device=self.loaded.device, name=f"hf:{model}"
        )
        limit = self.loaded.max_position_embeddings
        if max_seq_len is None:
            max_seq_len = limit
        elif limit is not None and max_seq_len > limit:
            raise ConfigError(f"max_seq_len={max_seq_len} is longer than hf:{model}'s context ({limit} tokens)")
        super().__init__(
            sampler,
            renderer,
            max_tokens=max_tokens if max_tokens is not None else (32 if model == "tiny" else 512),
            max_seq_len=max_seq_len,
            name=f"hf:{model}",
            **options,
        )


_ALLOWED = {
    "device",
    "dtype",
    "chat_template",
    "tool_prompt",
    "max_tokens",
    "max_seq_len",
    "max_turns",
    "temperature",
    "greedy",
    "top_p",
    "stop",
    "seed",
    "keep_thinking",
    "threads",
}


def make_policy(model: str | None = None, **options: Any) -> TransformersPolicy:
    """The ``hf`` provider's factory: ``make_policy("smollm2", temperature=0.7)``."""
    if not model:
        raise ConfigError("the hf policy needs a model: --policy hf:smollm2, hf:tiny or hf:PATH")
    unknown = sorted(set(options) - _ALLOWED)
    if unknown:
        raise ConfigError(
            f"hf policy: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(_ALLOWED))}"
        )
    stop = options.get("stop")
    if isinstance(stop, str):
        options["stop"] = (stop,)
    elif stop is not None and not isinstance(stop, Sequence):
        raise ConfigError("hf policy: 'stop' must be a string or a list of strings")
    return TransformersPolicy(model, **options)


def make_batch_sampler(model: str, **options: Any) -> Any:
    """A :class:`~rolloutgym_transformers.TransformersBatchSampler` for ``hf:MODEL``.

    ``make_batch_sampler("tiny")`` takes the loading options of :func:`make_policy`
    (``device``, ``dtype``, ``threads``, ``chat_template``, ``tool_prompt``); sampling
    options are the arguments of :func:`rolloutgym.llm.run_multi_turn_rollout`.
    """
    loading = {"device", "dtype", "threads", "chat_template", "tool_prompt"}
    unknown = sorted(set(options) - loading)
    if unknown:
        raise ConfigError(
            f"hf batch sampler: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(loading))} "
            "(sampling options go to run_multi_turn_rollout)"
        )
    policy = make_policy(model, **options)
    return policy.sampler.batch_sampler(policy.renderer)
