"""ChatTemplateRenderer on a real Hugging Face tokenizer with several chat templates."""

from __future__ import annotations

import pytest
from rolloutgym.builtin.toy import GUESS_TOOL
from rolloutgym.llm import ChatTemplateRenderer
from rolloutgym_transformers._tiny import build_tiny_tokenizer

# A template that ignores tools (like SmolLM2's).
PLAIN_CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' "
    "}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
# A template that opens a thinking block and, like Qwen3's, strips the reasoning from
# earlier assistant turns (the kind of history rewriting that breaks re-rendering).
THINKING = (
    "{% for message in messages %}{% if message['role'] == 'assistant' and not loop.last %}"
    "{{ '<|im_start|>assistant\\n' + message['content'].split('</think>')[-1] + '<|im_end|>\\n' }}{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}"
)
# A template that drops assistant turns altogether: incremental rendering is impossible.
DROPS_ASSISTANT = (
    "{% for message in messages %}{% if message['role'] != 'assistant' %}{{ message['role'] + ': ' + "
    "message['content'] + '\\n' }}{% endif %}{% endfor %}"
)


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer()


def text(tokenizer, tokens) -> str:
    return tokenizer.decode(list(tokens), skip_special_tokens=False)


def test_prompt_and_continuation_with_the_default_template(tokenizer) -> None:
    renderer = ChatTemplateRenderer(tokenizer)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert end in renderer.stop_token_ids and not renderer.thinking_opened
    prompt = text(tokenizer, renderer.render_prompt([{"role": "user", "content": "Guess."}], [GUESS_TOOL]))
    assert prompt.startswith("<|im_start|>system\n# Tools") and '"name": "guess"' in prompt
    assert prompt.endswith("<|im_start|>user\nGuess.<|im_end|>\n<|im_start|>assistant\n")
    sampled = tokenizer.encode("<tool_call>x</tool_call>", add_special_tokens=False) + [end]
    tool_result = [
        {"role": "tool", "tool_call_id": "c", "content": "higher"},
        {"role": "tool", "tool_call_id": "d", "content": "lower"},
    ]
    continuation = text(tokenizer, renderer.render_continuation(sampled, tool_result, [GUESS_TOOL]))
    # the model closed its turn itself: only the newline of the envelope is added
    assert (
        continuation == "\n<|im_start|>user\n<tool_response>\nhigher\n</tool_response>\n"
        "<tool_response>\nlower\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
    )
    unfinished = text(tokenizer, renderer.render_continuation(sampled[:-1], [{"role": "user", "content": "go on"}], []))
    assert unfinished == "<|im_end|>\n<|im_start|>user\ngo on<|im_end|>\n<|im_start|>assistant\n"


def test_incremental_rendering_matches_a_full_render_when_tokens_agree(tokenizer) -> None:
    renderer = ChatTemplateRenderer(tokenizer)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    conversation = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    tokens = renderer.render_prompt(conversation, [])
    reply = "Hello there"
    sampled = tokenizer.encode(reply, add_special_tokens=False) + [end]
    tokens += sampled
    tokens += renderer.render_continuation(sampled, [{"role": "user", "content": "Bye"}], [])
    full = tokenizer.apply_chat_template(
        [*conversation, {"role": "assistant", "content": reply}, {"role": "user", "content": "Bye"}],
        tokenize=False,
        add_generation_prompt=True,
        chat_template=renderer.chat_template,
    )
    assert text(tokenizer, tokens) == full


def test_templates_without_tool_support_get_hermes_instructions(tokenizer) -> None:
    renderer = ChatTemplateRenderer(tokenizer, chat_template=PLAIN_CHATML)
    prompt = text(
        tokenizer,
        renderer.render_prompt(
            [{"role": "system", "content": "Play."}, {"role": "user", "content": "Go"}], [GUESS_TOOL]
        ),
    )
    assert prompt.startswith("<|im_start|>system\nPlay.\n\n# Tools") and "<tool_call>" in prompt
    plain = ChatTemplateRenderer(tokenizer, chat_template=PLAIN_CHATML, tool_prompt="template")
    assert "# Tools" not in text(tokenizer, plain.render_prompt([{"role": "user", "content": "Go"}], [GUESS_TOOL]))


def test_history_rewriting_and_thinking_templates(tokenizer) -> None:
    renderer = ChatTemplateRenderer(tokenizer, chat_template=THINKING)
    assert renderer.thinking_opened
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    sampled = tokenizer.encode("hmm</think>42", add_special_tokens=False) + [end]
    continuation = text(tokenizer, renderer.render_continuation(sampled, [{"role": "user", "content": "Sure?"}], []))
    # what follows the verbatim sample is the new turn only; earlier turns are never re-rendered
    assert continuation == "\n<|im_start|>user\nSure?<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert renderer.decode(sampled) == "hmm</think>42"


def test_a_broken_template_names_the_fix(tokenizer) -> None:
    from rolloutgym_protocol.errors import ConfigError

    with pytest.raises(ConfigError, match="chat_template"):
        ChatTemplateRenderer(tokenizer, chat_template="{{ raise_exception('no') }}")
    with pytest.raises(ConfigError, match="dropped the assistant message"):
        ChatTemplateRenderer(tokenizer, chat_template=DROPS_ASSISTANT, stop_token_ids=[2]).render_continuation(
            [5], [{"role": "user", "content": "x"}], []
        )
    with pytest.raises(ConfigError, match="tool_prompt"):
        ChatTemplateRenderer(tokenizer, tool_prompt="never")


def test_fast_encoding_matches_the_tokenizer(tokenizer) -> None:
    renderer = ChatTemplateRenderer(tokenizer)
    sample = '<|im_start|>user\nhéllo 😀 <tool_call>{"a": 1}</tool_call><|im_end|>\n'
    assert renderer.encode(sample) == tokenizer.encode(sample, add_special_tokens=False)
