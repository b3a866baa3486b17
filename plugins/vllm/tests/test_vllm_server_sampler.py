"""The ``vllm`` policy's server path against a REAL local HTTP server.

``CompletionsServer`` listens on 127.0.0.1 and speaks vLLM's documented ``/v1/completions``
wire format (token-id prompts, ``return_token_ids``, ``token_id:N`` logprob tokens) with
scripted token ids in place of a GPU model. The tokenizer is a byte-level Hugging Face
tokenizer built in code (no download). Nothing of ours is mocked.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from rolloutgym.llm import check_provenance
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout
from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError, PolicyError
from rolloutgym_vllm import make_policy
from rolloutgym_vllm.testing import CompletionsServer, byte_tokenizer

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


def encode(text: str) -> list[int]:
    return TOKENIZER.encode(text, add_special_tokens=False)


def tool_call(number: int) -> list[int]:
    payload = json.dumps({"name": "guess", "arguments": {"number": number}})
    return encode(f"<tool_call>\n{payload}\n</tool_call>") + [END]


def decode(tokens: Any) -> str:
    return TOKENIZER.decode(list(tokens), skip_special_tokens=False)


def play(env_id: str, policy: Any, task: int = 0, max_steps: int = 6) -> Trajectory:
    async def go() -> Trajectory:
        environment = get_registry().make(env_id, task=task)
        try:
            return await arollout(environment, policy, seed=0, max_steps=max_steps)
        finally:
            environment.close()

    return asyncio.run(go())


def policy_for(server: CompletionsServer, **options: Any) -> Any:
    options.setdefault("timeout", 10)
    return make_policy("test-model", base_url=server.url, tokenizer=TOKENIZER, **options)


def test_multi_turn_tool_episode_is_token_exact() -> None:
    target = get_registry().make("toy/guess-v0", task=0).task.target
    with CompletionsServer([tool_call(target + 1), tool_call(target)], decode=decode) as server:
        trajectory = play("toy/guess-v0", policy_for(server))
        first, second = server.requests
    assert trajectory.total_reward == 1.0
    assert [step.policy_tokens for step in trajectory.steps] == [tuple(tool_call(target + 1)), tuple(tool_call(target))]
    # Each request's prompt is exactly the previous prompt + the sampled tokens + the new observation tokens.
    steps = trajectory.steps
    assert first["prompt"] == list(steps[0].observation_tokens)
    assert second["prompt"] == first["prompt"] + list(steps[0].policy_tokens) + list(steps[1].observation_tokens)
    assert check_provenance(trajectory) == 0
    assert all(step.policy_info["retokenization_mismatches"] == 0 for step in steps)
    assert steps[0].policy_logprobs == pytest.approx(
        [-0.1 * (index + 1) for index in range(len(steps[0].policy_tokens))]
    )


def test_request_asks_for_token_ids_and_sends_the_end_of_turn_token() -> None:
    with CompletionsServer([encode("7") + [END]], decode=decode) as server:
        play("toy/arith-v0", policy_for(server, max_tokens=32, temperature=0.0, seed=5))
        body = server.requests[0]
    assert all(isinstance(token, int) for token in body["prompt"])
    assert body["return_token_ids"] is True and body["logprobs"] == 0
    assert body["max_tokens"] == 32 and body["temperature"] == 0.0 and body["seed"] == 5
    assert END in body["stop_token_ids"]
    assert body["add_special_tokens"] is False and body["skip_special_tokens"] is False


def test_legacy_server_token_ids_come_from_logprob_tokens() -> None:
    with CompletionsServer([encode("12") + [END]], decode=decode, legacy=True) as server:
        trajectory = play("toy/arith-v0", policy_for(server))
    assert trajectory.steps[0].policy_tokens == tuple(encode("12") + [END])
    assert trajectory.steps[0].action == "12"


def test_length_stop_is_reported() -> None:
    with CompletionsServer([encode("123456789") + [END]], decode=decode) as server:
        trajectory = play("toy/arith-v0", policy_for(server, max_tokens=3))
    step = trajectory.steps[0]
    assert step.policy_tokens == tuple(encode("123")) and step.policy_stop_reason == "length"


def test_overloaded_server_is_retried() -> None:
    with CompletionsServer([encode("5") + [END]], decode=decode, fail_first=2) as server:
        trajectory = play("toy/arith-v0", policy_for(server, max_retries=3))
        assert len(server.requests) == 3
    assert trajectory.steps[0].action == "5"


def test_a_server_without_token_ids_is_a_clear_error() -> None:
    # return_tokens_as_token_ids switched off: the answer has neither token_ids nor token_id:N strings.
    with CompletionsServer([encode("5") + [END]], decode=decode, legacy=True) as server:
        policy = policy_for(server, extra_body={"return_tokens_as_token_ids": False})
        with pytest.raises(PolicyError, match="did not return the sampled token ids"):
            play("toy/arith-v0", policy)


def test_options_of_the_wrong_mode_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="apply to a server"):
        make_policy("m", timeout=3)
    with pytest.raises(ConfigError, match="unknown option"):
        make_policy("m", base_url="http://127.0.0.1:1/v1", tokenizer=TOKENIZER, temprature=1)


def test_unloadable_tokenizer_is_a_policy_error(tmp_path: Any) -> None:
    # An existing folder without tokenizer files: fails locally, no hub lookup.
    with pytest.raises(PolicyError, match="could not load the tokenizer"):
        make_policy("m", base_url="http://127.0.0.1:1/v1", tokenizer=str(tmp_path))
