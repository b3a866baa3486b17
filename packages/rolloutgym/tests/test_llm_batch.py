"""run_multi_turn_rollout: a mixed batch of tasks, one batched generation call per wave.

The "model" is scripted (a pure function of the prompt it reads, through the dependency-free
CharRenderer), so the same episodes can be run alone through the ordinary single-episode
loop and compared with what the batch returns.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym import Score, get_registry, spaces
from rolloutgym.errors import ConfigError, EnvNotFound, PolicyError, TaskNotFound
from rolloutgym.llm import (
    CharRenderer,
    ConcurrentBatchSampler,
    RolloutBatch,
    Sample,
    SamplingParams,
    ScriptedSampler,
    TokenPolicy,
    arun_multi_turn_rollout,
    as_batch_sampler,
    check_provenance,
    run_multi_turn_rollout,
)
from rolloutgym.rollouts import arollout

RENDERER = CharRenderer()
END = CharRenderer.END


def scripted_reply(prompt: Sequence[int]) -> str:
    """Plays each env from what it reads: binary search for the guessing game, arithmetic
    (right for even first operands, off by one otherwise), and two turns of the echo env."""
    text = RENDERER.decode(prompt)
    question = re.search(r"What is (\d+) ([-+*]) (\d+)\?", text)
    if question:
        a, operator, b = int(question.group(1)), question.group(2), int(question.group(3))
        value = a + b if operator == "+" else a - b if operator == "-" else a * b
        return f"The answer is {value if a % 2 == 0 else value + 1}."
    if "Echo" in text:
        return f"echo {text.count('again')} STOP"
    low, high = map(int, re.search(r"between (\d+) and (\d+)", text).groups())
    guesses = [int(value) for value in re.findall(r'"number": (\d+)', text.split("assistant\n", 1)[-1])]
    hints = re.findall(r"tool\n(higher|lower)", text)
    for guess, hint in zip(guesses, hints, strict=False):
        low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)
    middle = (low + high) // 2
    return f'<tool_call>{{"name": "guess", "arguments": {{"number": {middle}}}}}</tool_call>'


class EchoEnv(gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """A test env: two turns, then a score with two components; it sets a stop string."""

    metadata = {"render_modes": [], "nonblocking": True}
    next_stop_strings = ["STOP"]

    def __init__(self, task: int) -> None:
        self.task = task
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.turns = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.turns = 0
        return [{"role": "user", "content": f"Echo task {self.task}."}], {}

    def step(self, action: dict[str, Any]) -> Any:
        if self.task == 99:
            raise RuntimeError("echo env crashed on purpose")
        self.turns += 1
        content = action["content"]
        if self.turns < 2:
            return [{"role": "user", "content": "again"}], 0.0, False, False, {}
        stopped = float(content.endswith("STOP"))
        score = Score((stopped + 1.0) / 2, {"stopped": stopped, "echoed": 1.0})
        return [], score.value, True, False, {"score": score.to_dict()}


class ScriptedBatch:
    """A BatchSampler over the scripted model that records every wave it is given."""

    def __init__(self) -> None:
        self.renderer = RENDERER
        self.sampler = ScriptedSampler(RENDERER.encode, lambda prompt, _: scripted_reply(prompt), end_token_id=END)
        self.waves: list[tuple[list[tuple[int, ...]], list[SamplingParams]]] = []

    async def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        self.waves.append(([tuple(prompt) for prompt in prompts], list(params)))
        return [await self.sampler.sample(prompt, item) for prompt, item in zip(prompts, params, strict=True)]


TASK_TO_ENV = {"guess": "toy/guess-v0", "arith": "toy/arith-v0", "echo": EchoEnv}
OPTIONS = {"max_seq_len": 2000, "max_rollout_turns": 4, "max_tokens": 120}


def mixed_batch() -> list[dict[str, Any]]:
    return [
        {"task_name": "guess", "task": 0, "uid": "a"},
        {"task_name": "arith", "task": "arith-00", "uid": "b"},
        {"task_name": "echo", "task": 1, "uid": "c", "extra": [1, 2]},
        {"task_name": "arith", "task": 2, "uid": "d"},
        {"task_name": "guess", "task": "guess-06", "uid": "e"},
        {"task_name": "echo", "task": 2, "uid": "f"},
    ]


def alone(sample: dict[str, Any]) -> Any:
    """The same episode through the ordinary single-episode loop, one request at a time."""
    source = TASK_TO_ENV[sample["task_name"]]
    environment = (
        get_registry().make(source, task=sample["task"]) if isinstance(source, str) else source(sample["task"])
    )
    sampler = ScriptedSampler(RENDERER.encode, lambda prompt, _: scripted_reply(prompt), end_token_id=END)
    policy = TokenPolicy(
        sampler, RENDERER, max_tokens=OPTIONS["max_tokens"], max_seq_len=OPTIONS["max_seq_len"], max_turns=4
    )
    return asyncio.run(arollout(environment, policy, max_steps=5))


def test_a_mixed_batch_matches_its_episodes_run_alone() -> None:
    generation = ScriptedBatch()
    samples = mixed_batch()
    batch, metrics = run_multi_turn_rollout(generation, samples, TASK_TO_ENV, **OPTIONS)
    assert isinstance(batch, RolloutBatch) and batch.metrics is metrics
    assert batch["uid"] == ["a", "b", "c", "d", "e", "f"] and batch["extra"][2] == [1, 2]
    assert list(batch.samples) == samples  # other fields come back unchanged
    assert batch["env_id"] == ["toy/guess-v0", "toy/arith-v0", None, "toy/arith-v0", "toy/guess-v0", None]
    assert batch["task_id"][:2] == ["guess-00", "arith-00"]
    width = max(batch["input_lengths"])
    for index, sample in enumerate(samples):
        expected = alone(sample)
        trajectory = batch.trajectories[index]
        assert [step.policy_tokens for step in trajectory.steps] == [step.policy_tokens for step in expected.steps]
        assert [step.observation_tokens for step in trajectory.steps] == [
            step.observation_tokens for step in expected.steps
        ]
        assert batch["total_reward"][index] == expected.total_reward
        assert batch["stop_reason"][index] == expected.stop_reason
        length = batch["input_lengths"][index]
        ids, mask, logprobs = batch["input_ids"][index], batch["loss_mask"][index], batch["generation_logprobs"][index]
        assert len(ids) == len(mask) == len(logprobs) == width
        running = []
        for step in expected.steps:  # left-aligned: env tokens (mask 0), then sampled tokens (mask 1)
            running += [(token, 0, 0.0) for token in step.observation_tokens or ()]
            running += [(token, 1, -0.5) for token in step.policy_tokens or ()]
        assert list(zip(ids[:length], mask[:length], logprobs[:length], strict=True)) == running
        assert set(mask[length:]) <= {0} and set(ids[length:]) <= {batch.pad_token_id}
        for name, value in expected.score.component_values.items():
            assert batch[f"reward/{name}"][index] == value
    # reward components: one column per Score component, None where the env has no such component
    assert batch.reward_names == ["correct", "echoed", "formatted", "found", "stopped"]
    assert batch["reward/found"] == [1.0, None, None, None, 0.0, None]
    assert batch["reward/correct"] == [None, 0.0, None, 1.0, None, None]
    assert batch["reward/stopped"] == [None, None, 1.0, None, None, 1.0]
    assert batch["total_reward"] == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    assert batch["stop_reason"] == ["terminated"] * 4 + ["max_turns", "terminated"]
    assert batch["max_turns_reached"] == [False, False, False, False, True, False]
    assert batch["turn_count"] == [4, 1, 2, 1, 4, 2]
    # waves: one generation call each, in sample order, shrinking as samples finish
    assert metrics["generation_calls"] == len(generation.waves) == 4
    assert metrics["wave_sizes"] == [6, 4, 2, 2]
    assert generation.waves[1][0] == [
        tuple(t.steps[0].observation_tokens + t.steps[0].policy_tokens + t.steps[1].observation_tokens)
        for t in (batch.trajectories[0], batch.trajectories[2], batch.trajectories[4], batch.trajectories[5])
    ]
    assert [params.stop for params in generation.waves[1][1]] == [(), ("STOP",), (), ("STOP",)]  # set by the echo env
    assert metrics["retokenization_mismatches"] == 0
    assert all(check_provenance(trajectory) == 0 for trajectory in batch.trajectories)
    assert metrics["total_turns"] == 14 and metrics["num_samples"] == 6 and metrics["num_errors"] == 0
    assert metrics["max_turns_reached_rate"] == pytest.approx(1 / 6)
    assert metrics["histogram/gen_tokens_length"] == [
        len(step.policy_tokens) for trajectory in batch.trajectories for step in trajectory.steps if step.policy_tokens
    ]
    assert [
        total - generated
        for total, generated in zip(
            metrics["histogram/total_tokens_length"], metrics["histogram/gen_tokens_length"], strict=True
        )
    ] == metrics["histogram/input_tokens_length"]
    assert metrics["task/guess/mean_total_reward"] == 0.5 and metrics["task/echo/num_samples"] == 2


def test_an_env_that_raises_fails_only_its_sample() -> None:
    samples = [{"task_name": "echo", "task": 99}, *mixed_batch()[:3]]
    batch, metrics = run_multi_turn_rollout(ScriptedBatch(), samples, TASK_TO_ENV, **OPTIONS)
    assert batch["stop_reason"][0] == "error" and batch["total_reward"][0] is None
    assert batch["error"][0]["where"] == "env" and "crashed on purpose" in batch["error"][0]["error_message"]
    assert batch.trajectories[0] is None and batch.errors[0] is not None
    assert batch["input_lengths"][0] == 0 and set(batch["loss_mask"][0]) == {0}
    assert batch["total_reward"][1:] == [1.0, 0.0, 1.0] and batch["error"][1:] == [None, None, None]
    assert metrics["num_errors"] == 1 and metrics["num_completed"] == 3 and metrics["task/echo/num_errors"] == 1


def test_a_failing_generation_backend_fails_the_call() -> None:
    class Broken(ScriptedBatch):
        async def generate(self, prompts, params):
            if self.waves:
                raise RuntimeError("CUDA out of memory")
            return await super().generate(prompts, params)

    with pytest.raises(PolicyError, match=r"Broken failed in wave 1 \(2 prompts\): RuntimeError: CUDA out of memory"):
        run_multi_turn_rollout(Broken(), mixed_batch()[:3], TASK_TO_ENV, **OPTIONS)

    class Short(ScriptedBatch):
        def generate(self, prompts, params):  # a plain method runs in a worker thread
            return [Sample((5, END))]

    with pytest.raises(PolicyError, match="returned 1 samples for 3 prompts"):
        run_multi_turn_rollout(Short(), mixed_batch()[:3], TASK_TO_ENV, **OPTIONS)


def test_bad_batches_are_refused_before_any_generation() -> None:
    generation = ScriptedBatch()
    with pytest.raises(
        ConfigError, match=r"task_name 'gues'.*Did you mean 'guess'.*Known task names: arith, echo, guess"
    ):
        run_multi_turn_rollout(generation, [{"task_name": "gues", "task": 0}], TASK_TO_ENV, **OPTIONS)
    with pytest.raises(ConfigError, match="sample 1 has no 'task' field"):
        run_multi_turn_rollout(generation, [mixed_batch()[0], {"task_name": "guess"}], TASK_TO_ENV, **OPTIONS)
    with pytest.raises(TaskNotFound, match=r"sample 0 \(task_name 'guess'\).*30 tasks"):
        run_multi_turn_rollout(generation, [{"task_name": "guess", "task": 400}], TASK_TO_ENV, **OPTIONS)
    with pytest.raises(EnvNotFound, match="toy/gess-v0"):
        run_multi_turn_rollout(generation, mixed_batch(), {"guess": "toy/gess-v0"}, **OPTIONS)
    with pytest.raises(ConfigError, match="input_ids.*which the rollout writes"):
        run_multi_turn_rollout(generation, [{**mixed_batch()[0], "input_ids": [1]}], TASK_TO_ENV, **OPTIONS)
    with pytest.raises(ConfigError, match="max_rollout_turns must be at least 1"):
        run_multi_turn_rollout(generation, mixed_batch(), TASK_TO_ENV, max_seq_len=100, max_rollout_turns=0)
    assert generation.waves == []


def test_max_seq_len_truncates_samples() -> None:
    batch, metrics = run_multi_turn_rollout(
        ScriptedBatch(), mixed_batch()[:1], TASK_TO_ENV, max_seq_len=620, max_rollout_turns=4, max_tokens=120
    )
    assert batch["truncated"] == [True] and batch["stop_reason"] == ["max_seq_len"]
    assert batch["input_lengths"][0] <= 620 and metrics["truncation_rate"] == 1.0


def test_columns_and_datasets_in_async_twin() -> None:
    datasets = pytest.importorskip("datasets")
    rows = [{"task_name": "arith", "task": index, "uid": f"u{index}"} for index in range(4)]

    async def go() -> tuple[RolloutBatch, RolloutBatch]:
        from_dataset = await arun_multi_turn_rollout(
            ScriptedBatch(), datasets.Dataset.from_list(rows), TASK_TO_ENV, **OPTIONS
        )
        columns = {key: [row[key] for row in rows] for key in rows[0]}
        from_columns = await arun_multi_turn_rollout(ScriptedBatch(), columns, TASK_TO_ENV, **OPTIONS)
        with pytest.raises(RuntimeError, match="await arun_multi_turn_rollout"):
            run_multi_turn_rollout(ScriptedBatch(), rows, TASK_TO_ENV, **OPTIONS)
        return from_dataset[0], from_columns[0]

    first, second = asyncio.run(go())
    assert first["uid"] == second["uid"] == ["u0", "u1", "u2", "u3"]
    assert first["input_ids"] == second["input_ids"] and first["total_reward"] == [0.0, 1.0, 1.0, 1.0]
    tensors = first.to_tensors()
    assert tensors["input_ids"].shape == (4, max(first["input_lengths"]))
    assert tensors["loss_mask"].sum().item() == sum(first["gen_tokens"])
    assert [row["uid"] for row in first.rows()] == ["u0", "u1", "u2", "u3"]


def test_per_request_samplers_and_token_policies_are_batched() -> None:
    sampler = ScriptedSampler(RENDERER.encode, lambda prompt, _: scripted_reply(prompt), end_token_id=END)
    policy = TokenPolicy(sampler, RENDERER, max_tokens=120, temperature=0.5)
    wrapped = as_batch_sampler(policy)
    assert isinstance(wrapped, ConcurrentBatchSampler) and wrapped.renderer is RENDERER
    batch, metrics = run_multi_turn_rollout(
        ConcurrentBatchSampler(sampler, RENDERER, max_concurrency=2),
        mixed_batch(),
        TASK_TO_ENV,
        max_seq_len=2000,
        max_rollout_turns=4,
        max_tokens=120,
        seed=7,
    )
    assert batch["total_reward"] == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0] and metrics["generation_calls"] == 4
    with pytest.raises(ConfigError, match="per-request Sampler; pass renderer="):
        as_batch_sampler(sampler)
    with pytest.raises(ConfigError, match="generation must be a BatchSampler"):
        as_batch_sampler(object())
