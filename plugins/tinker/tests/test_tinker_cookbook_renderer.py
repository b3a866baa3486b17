"""Real tinker-cookbook renderers with an offline tokenizer, driving the toy envs.

The renderers (``qwen3_instruct``, ``role_colon``) are tinker-cookbook's own; the tokenizer
is a byte-level Hugging Face tokenizer built in code with the Qwen special tokens; the
remote sampler is ``StandInSamplingClient`` (the SDK's types, scripted tokens).

tinker-cookbook is an optional extra (it pins ``transformers<=5.5.4``): without it these
tests are skipped, with that reason.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip(
    "tinker_cookbook", reason="tinker-cookbook is not installed (pip install 'rolloutgym-tinker[cookbook]')"
)

from rolloutgym.llm import check_provenance  # noqa: E402
from rolloutgym.registry import get_registry  # noqa: E402
from rolloutgym.rollouts import arollout  # noqa: E402
from rolloutgym_protocol import Trajectory  # noqa: E402
from rolloutgym_protocol.errors import PolicyError  # noqa: E402
from rolloutgym_tinker import CookbookRenderer, policy_from_client  # noqa: E402
from rolloutgym_tinker.renderer import load_cookbook_renderer  # noqa: E402
from rolloutgym_tinker.testing import StandInSamplingClient, byte_tokenizer  # noqa: E402

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


def encode(text: str) -> list[int]:
    return TOKENIZER.encode(text, add_special_tokens=False)


def text(tokens: Any) -> str:
    return TOKENIZER.decode(list(tokens), skip_special_tokens=False)


def play(env_id: str, policy: Any, task: int = 0) -> Trajectory:
    async def go() -> Trajectory:
        environment = get_registry().make(env_id, task=task)
        try:
            return await arollout(environment, policy, seed=0, max_steps=6)
        finally:
            environment.close()

    return asyncio.run(go())


def test_qwen3_renderer_plays_a_tool_episode_token_exactly() -> None:
    target = get_registry().make("toy/guess-v0", task=0).task.target

    def call(number: int) -> list[int]:
        return encode(
            f"<tool_call>\n{json.dumps({'name': 'guess', 'arguments': {'number': number}})}\n</tool_call>"
        ) + [END]

    client = StandInSamplingClient([call(target - 1), call(target)])
    policy = policy_from_client(client, TOKENIZER, renderer="qwen3_instruct", model="Qwen/Qwen3-8B")
    trajectory = play("toy/guess-v0", policy)
    assert trajectory.total_reward == 1.0
    first, second = client.prompts
    steps = trajectory.steps
    # The model saw exactly: prompt, its own sampled tokens, the tool result in Qwen's envelope.
    assert first == list(steps[0].observation_tokens)
    assert second == first + list(steps[0].policy_tokens) + list(steps[1].observation_tokens)
    assert check_provenance(trajectory) == 0
    assert '"name": "guess"' in text(first) and "<tools>" in text(first)  # the cookbook's tool prompt
    continuation = text(steps[1].observation_tokens)
    assert continuation.startswith("\n<|im_start|>user\n<tool_response>\nhigher\n</tool_response><|im_end|>")
    assert continuation.endswith("<|im_start|>assistant\n")
    assert list(client.params[0].stop) == [END]


def test_role_colon_renderer_uses_its_stop_string() -> None:
    client = StandInSamplingClient([encode(" 42\n\nUser:")])
    policy = policy_from_client(client, TOKENIZER, renderer="role_colon")
    trajectory = play("toy/arith-v0", policy)
    assert trajectory.steps[0].action == "42"
    assert "\n\nUser:" in list(client.params[0].stop)
    assert text(client.prompts[0]).endswith("Assistant:")


def test_continuation_does_not_repeat_an_emitted_stop_string() -> None:
    renderer = CookbookRenderer(load_cookbook_renderer("role_colon", TOKENIZER))
    sampled = encode(" 41\n\nUser:")
    tail = renderer.render_continuation(sampled, [{"role": "user", "content": "again"}], [])
    assert text(sampled + tail).endswith(" 41\n\nUser: again\n\nAssistant:")


def test_a_renderer_without_tools_on_a_tool_env_is_a_clear_error() -> None:
    policy = policy_from_client(StandInSamplingClient([[END]]), TOKENIZER, renderer="role_colon")
    with pytest.raises(PolicyError, match="no tool-calling format"):
        play("toy/guess-v0", policy)


def test_decode_turns_parsed_tool_calls_into_hermes_blocks() -> None:
    renderer = CookbookRenderer(load_cookbook_renderer("qwen3", TOKENIZER))
    reply = encode(
        '<think>low half</think>ok<tool_call>\n{"name": "guess", "arguments": {"number": 3}}\n</tool_call>'
    ) + [END]
    decoded = renderer.decode(reply)
    assert decoded.startswith("<think>low half</think>")
    assert '<tool_call>\n{"name": "guess", "arguments": {"number": 3}}\n</tool_call>' in decoded


def kimi_call(call_id: str, number: int) -> list[int]:
    section = (
        "<|tool_calls_section_begin|><|tool_call_begin|>"
        f"{call_id}<|tool_call_argument_begin|>{json.dumps({'number': number})}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    )
    return encode(section) + [END]


def test_kimi_tool_result_answers_the_models_own_call_id() -> None:
    """The model's id (``functions.guess:0``) survives decode, so the tool result is rendered
    as the cookbook renders it (``## Return of functions.guess:0``), not under an invented id."""
    target = get_registry().make("toy/guess-v0", task=0).task.target
    client = StandInSamplingClient([kimi_call("functions.guess:0", target - 1), kimi_call("functions.guess:1", target)])
    policy = policy_from_client(client, TOKENIZER, renderer="kimi_k2", model="moonshotai/Kimi-K2-Thinking")
    trajectory = play("toy/guess-v0", policy)
    assert trajectory.total_reward == 1.0
    assert [step.action["tool_calls"][0]["id"] for step in trajectory.steps] == [
        "functions.guess:0",
        "functions.guess:1",
    ]
    continuation = text(trajectory.steps[1].observation_tokens)
    assert "## Return of functions.guess:0" in continuation
    assert check_provenance(trajectory) == 0


def test_decode_leaves_out_empty_thinking_and_keeps_call_ids() -> None:
    renderer = CookbookRenderer(load_cookbook_renderer("kimi_k2", TOKENIZER))
    decoded = renderer.decode(encode("<think></think>") + kimi_call("functions.guess:7", 5))
    assert "<think>" not in decoded
    assert '"id": "functions.guess:7"' in decoded


def test_renderer_errors_become_config_errors() -> None:
    """The cookbook raises a bare RendererError (a ValueError) for a conversation its format cannot
    hold; the user gets a ConfigError naming the renderer and the fix."""
    from rolloutgym_protocol.errors import ConfigError

    renderer = CookbookRenderer(load_cookbook_renderer("qwen3_disable_thinking", TOKENIZER))
    with pytest.raises(ConfigError, match="Qwen3DisableThinkingRenderer cannot render .*renderer=NAME"):
        renderer.render_prompt([{"role": "system", "content": "s"}, {"role": "assistant", "content": "hello"}], [])


def test_an_unparseable_reply_is_text_for_the_loop_not_a_crash() -> None:
    renderer = CookbookRenderer(load_cookbook_renderer("qwen3", TOKENIZER))
    assert renderer.decode(encode("no stop token here")).startswith("no stop token")
