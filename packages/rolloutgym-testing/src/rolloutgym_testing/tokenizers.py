"""Tokenizers built in code (no download) for testing token-level policy adapters."""

from __future__ import annotations

from typing import Any

__all__ = ["SPECIAL_TOKENS", "byte_tokenizer"]

SPECIAL_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|im_start|>", "<tool_call>", "</tool_call>", "<think>", "</think>")


def byte_tokenizer() -> Any:
    """A byte-level ``PreTrainedTokenizerFast`` (256 byte tokens + ChatML/Hermes specials), built offline.

    ``<|im_end|>`` (id 256) is the end-of-turn/EOS token. Needs ``transformers`` and ``tokenizers``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={symbol: index for index, symbol in enumerate(alphabet)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=SPECIAL_TOKENS[0],
        pad_token=SPECIAL_TOKENS[1],
        additional_special_tokens=list(SPECIAL_TOKENS[2:]),
    )
