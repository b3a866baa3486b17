"""``hf:tiny``: a tiny random Llama model and a byte-level BPE tokenizer, built in code.

No download, deterministic (same weights and vocabulary on every machine), loads in
milliseconds. It samples near-uniform gibberish: it exists to exercise the token loop
(rendering, sampling, logprobs, truncation, provenance) in tests and benchmarks.
"""

from __future__ import annotations

from typing import Any

from rolloutgym.llm import CHATML_TEMPLATE

__all__ = ["TINY_CORPUS", "build_tiny", "build_tiny_tokenizer"]

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

TINY_CORPUS = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n",
    "<|im_start|>user\nWhat is 12 + 30? Reply with the integer only.<|im_end|>\n<|im_start|>assistant\n42<|im_end|>\n",
    '<tool_call>\n{"name": "guess", "arguments": {"number": 7}}\n</tool_call>',
    "<tool_response>\nhigher\n</tool_response> lower correct error",
    "<think>\nLet me think step by step.\n</think>\nThe answer is 1234567890.",
    "I am thinking of an integer between 1 and 100. Find it with the guess tool.",
    "The quick brown fox jumps over the lazy dog; refund the order, look up the customer.",
]


def build_tiny_tokenizer(vocab_size: int = 512) -> Any:
    """A byte-level BPE tokenizer (any text encodes) with ChatML special tokens and template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(TINY_CORPUS * 4, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHATML_TEMPLATE,
    )


def build_tiny(*, seed: int = 0, hidden_size: int = 64, layers: int = 2) -> tuple[Any, Any]:
    """``(model, tokenizer)``: a 2-layer Llama with random weights (seeded) and its tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.eval()
    return model, tokenizer
