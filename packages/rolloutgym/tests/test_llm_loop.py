"""The token-level LLM loop (TokenPolicy) on the toy envs, with a scripted model and a real renderer."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

import pytest
from rolloutgym.builtin.toy import ArithmeticEnv, GuessNumberEnv, arith_tasks, guess_tasks
from rolloutgym.llm import (
    CharRenderer,
    Sample,
    SamplingParams,
    ScriptedSampler,
    TokenPolicy,
    check_provenance,
    metrics,
    trajectory_tokens,
)
from rolloutgym.rollouts import arollout, arollout_group, rollout

RENDERER = CharRenderer()


def binary_search_reply(prompt: Sequence[int], index: int) -> str:
    """A scripted 'model' that plays the guessing game by binary search on what it reads."""
    text = RENDERER.decode(prompt)
    low, high = map(int, re.search(r"between (\d+) and (\d+)", text).groups())
    guesses = [int(value) for value in re.findall(r'"number": (\d+)', text.split("assistant\n", 1)[-1])]
    hints = re.findall(r"tool\n(higher|lower)", text)
    for guess, hint in zip(guesses, hints, strict=False):
        low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)
    middle = (low + high) // 2
    return f'Trying {middle}.<tool_call>{{"name": "guess", "arguments": {{"number": {middle}}}}}</tool_call>'


def make_policy(replies, **options) -> tuple[TokenPolicy, ScriptedSampler]:
    sampler = ScriptedSampler(RENDERER.encode, replies, end_token_id=CharRenderer.END)
    return TokenPolicy(sampler, RENDERER, **options), sampler


def test_multi_turn_episode_records_exact_tokens() -> None:
    policy, sampler = make_policy(binary_search_reply, max_tokens=200)
    environment = GuessNumberEnv(guess_tasks()[3])
    trajectory = asyncio.run(arollout(environment, policy, max_steps=20))
    assert trajectory.score.value == 1.0 and len(trajectory) > 1
    sequence = trajectory_tokens(trajectory)
    # Every prompt the model saw is a prefix of the recorded sequence, and the sequence is
    # exactly observations + samples.
    for prompt in sampler.prompts:
        assert sequence.input_ids[: len(prompt)] == prompt
    rebuilt = []
    for step, prompt in zip(trajectory.steps, sampler.prompts, strict=True):
        rebuilt += step.observation_tokens
        assert tuple(rebuilt) == prompt
        rebuilt += step.policy_tokens
    assert tuple(rebuilt) == sequence.input_ids
    assert sum(sequence.loss_mask) == sum(len(step.policy_tokens) for step in trajectory.steps)
    assert all(len(step.policy_tokens) == len(step.policy_logprobs) for step in trajectory.steps)
    assert check_provenance(trajectory) == 0
    first = trajectory.steps[0]
    assert (
        first.action["tool_calls"][0]["name"] == "guess"
        and first.action["content"] == f"Trying {first.action['tool_calls'][0]['arguments']['number']}."
    )
    assert first.policy_info["tools"] == GuessNumberEnv.tools
    assert first.policy_stop_reason == "stop"


def test_provenance_survives_the_run_file_round_trip() -> None:
    policy, _ = make_policy(binary_search_reply)
    trajectory = asyncio.run(arollout(GuessNumberEnv(guess_tasks()[1]), policy, max_steps=20))
    from rolloutgym_protocol import Trajectory

    reloaded = Trajectory.from_dict(json.loads(json.dumps(trajectory.to_dict())))
    assert check_provenance(reloaded) == 0
    tampered = Trajectory.from_dict(
        {
            **reloaded.to_dict(),
            "steps": [
                {**reloaded.steps[0].to_dict(), "observation_tokens": [5, 6]},
                *[s.to_dict() for s in reloaded.steps[1:]],
            ],
        }
    )
    assert check_provenance(tampered) >= 1


class EditingSampler:
    """A backend that conditions on something other than what it was given (drops the first token)."""

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        tokens = tuple(RENDERER.encode("42")) + (CharRenderer.END,)
        return Sample(tokens, (-1.0,) * len(tokens), "stop", tuple(prompt_token_ids[1:]))


def test_a_sampler_that_sees_a_different_prompt_is_counted() -> None:
    policy = TokenPolicy(EditingSampler(), RENDERER)
    trajectory = rollout(ArithmeticEnv(arith_tasks()[0]), policy)
    assert trajectory.steps[0].policy_info["retokenization_mismatch"] is True
    assert metrics([trajectory])["retokenization_mismatches"] == 1


def test_text_env_gets_the_reply_without_thinking() -> None:
    task = arith_tasks()[2]
    policy, _ = make_policy([f"<think>maybe 7?</think> {task.answer}"])
    trajectory = rollout(ArithmeticEnv(task), policy)  # sync rollout works too
    assert trajectory.steps[0].action == str(task.answer)
    assert trajectory.score.value == 1.0
    assert trajectory.steps[0].policy_info["malformed_thinking"] is False


def test_invalid_tool_calls_become_env_errors_and_are_counted() -> None:
    replies = [
        '<tool_call>{"name": "guess", "arguments": {"number": 3</tool_call>',  # bad JSON
        '<tool_call>{"name": "peek", "arguments": {}}</tool_call>',  # unknown tool
        "<think>I give up",  # unbalanced thinking, final answer
    ]
    policy, _ = make_policy(replies)
    trajectory = asyncio.run(arollout(GuessNumberEnv(guess_tasks()[0]), policy, max_steps=10))
    assert len(trajectory) == 3
    assert trajectory.steps[0].next_observation[0]["content"].startswith("error:")
    assert trajectory.steps[1].next_observation[0]["content"].startswith("error:")
    assert trajectory.steps[0].policy_info["problems"][0].startswith("tool call 0: not valid JSON")
    assert "unknown tool 'peek'" in trajectory.steps[1].policy_info["problems"][0]
    result = metrics([trajectory])
    assert result["invalid_action_count"] == 2
    assert result["malformed_thinking_count"] == 1
    assert trajectory.steps[-1].info["invalid_actions"] == 2  # the env agrees


def test_max_seq_len_truncates_the_sample_then_the_observation() -> None:
    guess = '<tool_call>{"name": "guess", "arguments": {"number": 1}}</tool_call>'
    environment = GuessNumberEnv(guess_tasks()[5])
    prompt_length = len(RENDERER.render_prompt(environment.reset()[0], GuessNumberEnv.tools))
    limit = prompt_length + len(RENDERER.encode(guess)) + 1 + 10  # room for one turn, then 10 tokens
    policy, sampler = make_policy([guess], max_seq_len=limit, max_tokens=500)
    trajectory = asyncio.run(arollout(environment, policy, max_steps=10))
    sequence = trajectory_tokens(trajectory)
    assert len(sequence) <= limit
    last = trajectory.steps[-1]
    assert last.policy_info["ended_by"] == "max_seq_len" and last.policy_stop_reason == "max_seq_len"
    assert last.policy_tokens == () and last.action == {"role": "assistant", "content": ""}
    assert len(sequence) == limit  # the observation was cut to fit exactly
    assert check_provenance(trajectory) == 0
    assert metrics([trajectory])["truncation_rate"] == 1.0
    assert trajectory.truncated and not trajectory.terminated and trajectory.stop_reason == "max_seq_len"


def test_a_sample_cut_by_max_seq_len_says_so() -> None:
    environment = ArithmeticEnv(arith_tasks()[0])
    prompt_length = len(RENDERER.render_prompt(environment.reset()[0], []))
    policy, sampler = make_policy(["a long answer that does not fit"], max_seq_len=prompt_length + 5)
    trajectory = rollout(environment, policy)
    step = trajectory.steps[0]
    assert len(step.policy_tokens) == 5 and step.policy_stop_reason == "max_seq_len"
    assert len(trajectory_tokens(trajectory)) == prompt_length + 5


def test_max_turns_ends_the_episode_without_sampling() -> None:
    policy, sampler = make_policy(['<tool_call>{"name": "guess", "arguments": {"number": 1}}</tool_call>'], max_turns=2)
    trajectory = asyncio.run(arollout(GuessNumberEnv(guess_tasks()[5]), policy, max_steps=10))
    assert sampler.calls == 2 and len(trajectory) == 3
    assert trajectory.steps[-1].policy_stop_reason == "max_turns"
    result = metrics([trajectory])
    assert result["max_turns_reached_rate"] == 1.0 and result["total_turns"] == 2


class StopStringEnv(ArithmeticEnv):
    """An env that asks for a stop string on the next turn."""

    next_stop_strings = ["</answer>"]


def test_env_stop_strings_and_sampling_options_reach_the_sampler() -> None:
    seen: list[SamplingParams] = []

    class Recording(ScriptedSampler):
        async def sample(self, prompt_token_ids, params):
            seen.append(params)
            return await super().sample(prompt_token_ids, params)

    sampler = Recording(RENDERER.encode, ["<answer>5</answer>"], end_token_id=CharRenderer.END)
    policy = TokenPolicy(sampler, RENDERER, stop=["STOP"], greedy=True, seed=3, max_tokens=64)
    rollout(StopStringEnv(arith_tasks()[0]), policy)
    assert seen[0].stop == ("STOP", "</answer>")
    assert (
        seen[0].greedy
        and seen[0].seed == 3
        and seen[0].stop_token_ids == (CharRenderer.END,)
        and seen[0].max_tokens == 64
    )


def test_episodes_advance_independently_and_concurrently() -> None:
    started: list[int] = []

    class Slow(ScriptedSampler):
        async def sample(self, prompt_token_ids, params):
            started.append(self.calls)
            await asyncio.sleep(0.05)
            return await super().sample(prompt_token_ids, params)

    sampler = Slow(RENDERER.encode, binary_search_reply, end_token_id=CharRenderer.END)
    policy = TokenPolicy(sampler, RENDERER)
    group = asyncio.run(
        arollout_group(
            guess_tasks()[2], lambda task: GuessNumberEnv(task), policy, num_rollouts=6, concurrency=6, max_steps=20
        )
    )
    assert not group.errors and all(score.value == 1.0 for score in group.scores)
    result = metrics([group])
    assert result["num_samples"] == 6 and result["retokenization_mismatches"] == 0
    assert result["natural_termination_rate"] == 1.0
    assert (
        result["mean_gen_tokens_per_sample"] > 0
        and result["mean_env_tokens_per_sample"] > result["mean_gen_tokens_per_sample"]
    )


def test_policy_needs_its_environment() -> None:
    from rolloutgym_protocol.errors import ConfigError, PolicyError

    policy, _ = make_policy(["x"])
    with pytest.raises(PolicyError, match="needs its environment"):
        policy([{"role": "user", "content": "hi"}])
    with pytest.raises(ConfigError, match="max_seq_len"):
        make_policy(["x"], max_seq_len=1)
