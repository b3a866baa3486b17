"""The seed's rollout API by its names, with a NeMo-style batched env, both ways.

``BiggerEnv`` is written the way a NeMo-RL user writes an ``EnvironmentInterface``: one
batched ``step(message_log_batch, metadata)`` whose state lives in ``extra_env_info``.
NeMo-RL's package is heavy, so the interface is rolloutgym's stand-in with its documented
signature. The model is scripted over the dependency-free CharRenderer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

import pytest
from rolloutgym.errors import ConfigError
from rolloutgym.llm import CharRenderer, ScriptedSampler
from rolloutgym.llm.environments import EnvironmentInterface, EnvironmentReturn, RolloutgymEnvironment
from rolloutgym.llm.generation_interface import BatchSamplerGeneration, GenerationInterface, GenerationInterfaceSampler
from rolloutgym.llm.rollouts import (
    async_generate_response_for_sample_turn,
    calculate_rewards,
    generate_responses,
    run_async_multi_turn_rollout,
    run_multi_turn_rollout,
    run_sample_multi_turn_rollout,
)

RENDERER = CharRenderer()


def as_list(value):
    """A seed column as a list (the seed's functions give torch tensors when torch is installed)."""
    return value.tolist() if hasattr(value, "tolist") else list(value)


class BiggerEnv(EnvironmentInterface):
    """Two turns: name a number above the target; the second target comes in extra_env_info."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def step(self, message_log_batch, metadata):
        self.calls.append(len(message_log_batch))
        observations, infos, stops, rewards, done = [], [], [], [], []
        for log, info in zip(message_log_batch, metadata, strict=True):
            number = int(re.findall(r"-?\d+", log[-1]["content"])[-1])
            if info["turn"] == 0:
                target = info["target"] * 2
                observations.append({"role": "environment", "content": f"Now above {target}."})
                infos.append({"target": target, "turn": 1})
                stops.append(["!"])
                rewards.append(0.0)
                done.append(False)
            else:
                observations.append({"role": "environment", "content": "done"})
                infos.append(info)
                stops.append(None)
                rewards.append(1.0 if number > info["target"] else 0.0)
                done.append(True)
        return EnvironmentReturn(observations, infos, stops, rewards, done)


def reply(prompt: Sequence[int], _index: int) -> str:
    target = int(re.findall(r"above (\d+)", RENDERER.decode(prompt))[-1])
    return f"{target + 1}" if target % 3 else f"{target - 1}"  # wrong when the target is a multiple of 3


class Batch:
    def __init__(self, delay=None) -> None:
        self.renderer = RENDERER
        self.sampler = ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END)
        self.delay = delay
        self.sizes: list[int] = []

    async def generate(self, prompts, params):
        self.sizes.append(len(prompts))
        if self.delay:
            await asyncio.sleep(self.delay(prompts[0]))
        return [await self.sampler.sample(p, q) for p, q in zip(prompts, params, strict=True)]


def samples(targets):
    return [
        {
            "task_name": "bigger",
            "message_log": [{"role": "user", "content": f"Say a number above {target}."}],
            "extra_env_info": {"target": target, "turn": 0},
            "idx": index,
        }
        for index, target in enumerate(targets)
    ]


@pytest.mark.parametrize("rollout", [run_multi_turn_rollout, run_async_multi_turn_rollout])
def test_a_nemo_style_batched_env_runs_through_the_seed_functions(rollout) -> None:
    env = BiggerEnv()
    generation = Batch()
    batch, metrics = rollout(generation, samples([1, 4, 5, 7]), None, {"bigger": env}, 512)
    # second-turn targets 2, 8, 10, 14 (carried in extra_env_info): no multiple of 3, so every answer is right
    assert as_list(batch["total_reward"]) == [1.0, 1.0, 1.0, 1.0]
    assert batch["turn_count"] == [2, 2, 2, 2] and batch["idx"] == [0, 1, 2, 3]
    log = batch["message_log"][0]
    assert [entry["role"] for entry in log] == ["user", "assistant", "environment", "assistant", "environment"]
    assert log[1]["content"] == "2" and log[3]["content"] == "3" and log[2]["content"] == "Now above 2."
    assert all(len(entry["token_ids"]) for entry in log[:-1]) and "generation_logprobs" in log[1]
    # the env's last word is appended as the seed does; it never entered the context, so no tokens
    assert (log[-1]["role"], log[-1]["content"], as_list(log[-1]["token_ids"])) == ("environment", "done", [])
    tokens = [t for entry in log for t in as_list(entry["token_ids"])]
    assert tokens == batch["input_ids"][0][: batch["input_lengths"][0]]
    assert sum(env.calls) == 8 and metrics["retokenization_mismatches"] == 0
    if rollout is run_multi_turn_rollout:
        assert env.calls == [4, 4] and generation.sizes == [4, 4]  # one batched env step and one generate per wave
    else:
        assert generation.sizes == [1] * 8  # free-running: each turn sent alone


def test_the_turn_budget_ends_the_episode_without_stepping_the_env_again() -> None:
    env = BiggerEnv()
    batch, metrics = run_multi_turn_rollout(Batch(), samples([1, 4]), None, {"bigger": env}, 512, 1)
    assert env.calls == [2]  # the seed's loop stops at the budget: the env never sees an empty answer
    assert batch["stop_reason"] == ["max_turns", "max_turns"] and as_list(batch["max_turns_reached"]) == [True, True]
    assert as_list(batch["total_reward"]) == [0.0, 0.0] and metrics["max_turns_reached_rate"] == 1.0
    assert [entry["role"] for entry in batch["message_log"][0]] == ["user", "assistant", "environment"]


def test_the_seed_functions_give_the_seeds_tensors() -> None:
    torch = pytest.importorskip("torch")
    batch, _ = run_multi_turn_rollout(Batch(), samples([1, 4]), None, {"bigger": BiggerEnv()}, 512)
    assert batch["total_reward"].dtype == torch.float32 and batch["truncated"].dtype == torch.bool
    assert batch["total_reward"].mean().item() == 1.0  # seed code does tensor arithmetic on it
    assistant = batch["message_log"][0][1]
    assert assistant["token_ids"].dtype == torch.int64 and assistant["generation_logprobs"].dtype == torch.float32
    flat = torch.cat([message["token_ids"] for message in batch["message_log"][0]])  # as the seed flattens logs
    assert flat.tolist() == batch.columns["input_ids"][0][: batch["input_lengths"][0]]
    assert batch.columns["total_reward"] == [1.0, 1.0] and batch.to_tensors()["total_reward"].tolist() == [1.0, 1.0]


def test_wrong_answers_score_zero_and_the_penalty_config_applies() -> None:
    from rolloutgym.llm import InvalidActionPenaltyConfig

    batch, _ = run_multi_turn_rollout(Batch(), samples([3, 6]), None, {"bigger": BiggerEnv()}, 512)
    # target 3 -> reply 2 (wrong but the first turn is not scored), then target 6 -> 5: wrong
    assert as_list(batch["total_reward"]) == [0.0, 0.0]
    config = InvalidActionPenaltyConfig(invalid_action_penalty=0.5)
    assert config.penalty(2, 0) == 1.0 and InvalidActionPenaltyConfig(enabled=False).penalty(3, 3) == 0.0


def test_free_running_does_not_wait_for_the_slowest_sample() -> None:
    """A sample with a slow model call holds back every wave, never a free-running batch."""

    def delay(prompt):
        return 0.3 if "above 1." in RENDERER.decode(prompt) else 0.0

    generation = Batch(delay)
    finished = []

    class Recording(BiggerEnv):
        def step(self, logs, metadata):
            result = super().step(logs, metadata)
            finished.extend(
                info["target"] for info, end in zip(result.metadata, result.terminateds, strict=True) if end
            )
            return result

    run_async_multi_turn_rollout(generation, samples([1, 4, 5]), None, {"bigger": Recording()}, 512)
    assert finished[-1] == 2  # the slow sample finished last; the others did not wait for it
    finished.clear()
    run_multi_turn_rollout(Batch(delay), samples([1, 4, 5]), None, {"bigger": Recording()}, 512)
    assert sorted(finished) == [2, 8, 10]


def test_a_rolloutgym_env_as_an_environment_interface() -> None:
    env = RolloutgymEnvironment("toy/arith-v0")
    first = env.initial_sample(0, task_name="arith")
    second = env.initial_sample(1, task_name="arith")
    question = first["message_log"][-1]["content"]
    a, operator, b = re.search(r"What is (\d+) ([-+*]) (\d+)\?", question).groups()
    value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[operator]
    first["message_log"].append({"role": "assistant", "content": f"The answer is {value}."})
    second["message_log"].append({"role": "assistant", "content": "The answer is -99999."})
    result = calculate_rewards([first, second], {"arith": env})
    assert as_list(result.rewards) == [1.0, 0.0] and as_list(result.terminateds) == [True, True]
    assert result.observations[0]["role"] == "environment" and env.live == {}
    with pytest.raises(ConfigError, match="EnvironmentInterface"):
        calculate_rewards([first], {"arith": "toy/arith-v0"})


def test_a_rolloutgym_env_steps_like_a_nemo_rl_env() -> None:
    """What NeMo-RL's loop does with a step's return: add the rewards to a tensor, mask with the terminateds."""
    torch = pytest.importorskip("torch")
    env = RolloutgymEnvironment("toy/arith-v0")
    batch = [env.initial_sample(task, task_name="arith") for task in range(2)]
    for sample in batch:
        sample["message_log"].append({"role": "assistant", "content": "The answer is -99999."})
    result = env.step([sample["message_log"] for sample in batch], [sample["extra_env_info"] for sample in batch])
    total_rewards = torch.zeros(2)
    total_rewards[torch.arange(2)] += result.rewards
    assert total_rewards.tolist() == [0.0, 0.0] and bool(result.terminateds.all())
    assert [observation["role"] for observation in result.observations] == ["environment", "environment"]
    assert env.global_post_process_and_metrics(batch) == (batch, {})


def test_the_rolloutgym_env_interface_runs_under_the_seed_loop_too() -> None:
    env = RolloutgymEnvironment("toy/arith-v0")
    batch_in = [env.initial_sample(task, task_name="arith") for task in range(3)]

    def solve(prompt, _index):
        a, operator, b = re.findall(r"What is (\d+) ([-+*]) (\d+)\?", RENDERER.decode(prompt))[-1]
        return f"The answer is {eval(f'{a}{operator}{b}')}."  # noqa: S307 - digits and an operator

    generation = Batch()
    generation.sampler = ScriptedSampler(RENDERER.encode, solve, end_token_id=CharRenderer.END)
    batch, _ = run_multi_turn_rollout(generation, batch_in, None, {"arith": env}, 1024)
    assert as_list(batch["total_reward"]) == [1.0, 1.0, 1.0]


def test_generation_helpers_append_to_the_message_log() -> None:
    log = [{"role": "user", "content": "Say a number above 7."}]
    prompt = RENDERER.render_prompt(log, [])
    batch = {"message_log": [list(log)]}
    batch, generated, metrics = generate_responses(
        Batch(), {"input_ids": [prompt + [0, 0]]}, batch, None, [len(prompt)]
    )
    assert batch["message_log"][0][-1]["content"] == "8" and as_list(generated[0])[-1] == CharRenderer.END
    assert metrics["total_generated_tokens"] == len(generated[0])
    updated, tokens, length, _ = asyncio.run(async_generate_response_for_sample_turn(Batch(), log, None, None, 512))
    assert as_list(updated[-1]["token_ids"]) == as_list(tokens) and length == len(prompt)
    state, _ = asyncio.run(
        run_sample_multi_turn_rollout(3, samples([4])[0], Batch(), None, {"bigger": BiggerEnv()}, 512)
    )
    assert state["idx"] == 0 and state["total_reward"] == 1.0 and len(state["message_log"]) == 5


def test_a_tokenizer_that_encodes_unlike_the_renderer_is_refused() -> None:
    class Other:
        def encode(self, text, add_special_tokens=False):
            return [ord(character) for character in text]

    with pytest.raises(ConfigError, match="encodes text differently"):
        run_multi_turn_rollout(Batch(), samples([1]), Other(), {"bigger": BiggerEnv()}, 512)
    batch, _ = run_multi_turn_rollout(Batch(), samples([1]), RENDERER, {"bigger": BiggerEnv()}, 512)
    assert as_list(batch["total_reward"]) == [1.0]


# NeMo-RL's GenerationInterface both ways: a NeMo-style ``policy_generation`` passed to the
# seed's functions unchanged, and a rolloutgym generation answering ``generate(data, greedy)``.
# ``EchoGeneration`` answers the way NeMo-RL's generation backends do (right-padded
# ``output_ids`` holding prompt + generated tokens, ``logprobs`` aligned with them,
# ``unpadded_sequence_lengths``); the interface is rolloutgym's stand-in with its signature.


def _rows(value):
    return value.tolist() if hasattr(value, "tolist") else list(value)


class EchoGeneration(GenerationInterface):
    """Answers 'Say a number above N' with N + 1 (N - 1 for multiples of 3), NeMo-RL's output shape."""

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []
        self.async_rows: list[int] = []

    def prepare_for_generation(self, *args, **kwargs):
        return True

    def finish_generation(self, *args, **kwargs):
        return True

    def _reply(self, prompt):
        target = int(re.findall(r"above (\d+)", RENDERER.decode(prompt))[-1])
        return RENDERER.encode(f"{target + 1}" if target % 3 else f"{target - 1}") + [CharRenderer.END]

    def _answer(self, data):
        rows, lengths = _rows(data["input_ids"]), [int(n) for n in _rows(data["input_lengths"])]
        full = [row[:length] + self._reply(row[:length]) for row, length in zip(rows, lengths, strict=True)]
        width = max(len(row) for row in full)
        return {
            "output_ids": [row + [0] * (width - len(row)) for row in full],
            "logprobs": [
                [0.0] * length + [-0.5] * (len(row) - length) + [0.0] * (width - len(row))
                for row, length in zip(full, lengths, strict=True)
            ],  # fmt: skip
            "generation_lengths": [len(row) - length for row, length in zip(full, lengths, strict=True)],
            "unpadded_sequence_lengths": [len(row) for row in full],
        }

    def generate(self, data, greedy=False):
        self.batch_sizes.append(len(_rows(data["input_lengths"])))
        return self._answer(data)

    async def generate_async(self, data, greedy=False):
        for index in range(len(_rows(data["input_lengths"]))):
            self.async_rows.append(index)
            one = {
                "input_ids": [_rows(data["input_ids"])[index]],
                "input_lengths": [_rows(data["input_lengths"])[index]],
            }
            yield index, self._answer(one)


def test_a_nemo_style_generation_is_passed_unchanged_with_its_tokenizer() -> None:
    generation = EchoGeneration()
    batch, metrics = run_multi_turn_rollout(generation, samples([1, 4, 5, 7]), RENDERER, {"bigger": BiggerEnv()}, 512)
    assert as_list(batch["total_reward"]) == [1.0, 1.0, 1.0, 1.0] and batch["turn_count"] == [2, 2, 2, 2]
    assert generation.batch_sizes == [4, 4]  # one generate(data, greedy) per wave
    assert metrics["retokenization_mismatches"] == 0
    assert as_list(batch["message_log"][0][1]["generation_logprobs"]) == [-0.5, -0.5]  # "2" + end of turn


def test_async_rollouts_go_through_generate_async() -> None:
    generation = EchoGeneration()
    batch, _ = run_async_multi_turn_rollout(generation, samples([1, 4]), RENDERER, {"bigger": BiggerEnv()}, 512)
    assert (
        as_list(batch["total_reward"]) == [1.0, 1.0]
        and generation.batch_sizes == []
        and len(generation.async_rows) == 4
    )


def test_a_nemo_style_generation_needs_the_tokenizer() -> None:
    with pytest.raises(ConfigError, match="pass its tokenizer"):
        run_multi_turn_rollout(EchoGeneration(), samples([1]), None, {"bigger": BiggerEnv()}, 512)


def test_a_row_longer_than_the_room_left_is_cut_and_says_length() -> None:
    # the first prompt leaves room for 4 of the 6 tokens EchoGeneration gives ("12345" + end of turn)
    prompt = len(RENDERER.render_prompt([{"role": "user", "content": "Say a number above 12344."}], []))
    sample = {
        "task_name": "bigger",
        "message_log": [{"role": "user", "content": "Say a number above 12344."}],
        "extra_env_info": {"target": 12344, "turn": 0},
    }
    batch, _ = run_multi_turn_rollout(EchoGeneration(), [sample], RENDERER, {"bigger": BiggerEnv()}, prompt + 4)
    assert batch["turn_stop_reasons"][0][0] == "max_seq_len" and batch["gen_tokens"] == [4]
    assert batch["message_log"][0][1]["content"] == "1234" and batch["stop_reason"] == ["max_seq_len"]


def test_a_rolloutgym_generation_answers_generate_like_nemo_rl() -> None:
    generation = BatchSamplerGeneration(Batch(), max_new_tokens=64)
    prompts = [RENDERER.render_prompt([{"role": "user", "content": f"Say a number above {n}."}], []) for n in (7, 42)]
    width = max(map(len, prompts))
    data = {"input_ids": [p + [0] * (width - len(p)) for p in prompts], "input_lengths": [len(p) for p in prompts]}
    output = generation.generate(data, greedy=True)
    ids, lengths = _rows(output["output_ids"]), _rows(output["unpadded_sequence_lengths"])
    assert RENDERER.decode(ids[0][len(prompts[0]) : lengths[0]]) == "8"
    assert RENDERER.decode(ids[1][len(prompts[1]) : lengths[1]]) == "41"
    assert _rows(output["generation_lengths"]) == [2, 3] and ids[0][lengths[0] :] == [0] * (len(ids[0]) - lengths[0])
    # and back: rolloutgym's loop takes it as a policy_generation again (the sampler behind it)
    batch, _ = run_multi_turn_rollout(generation, samples([4]), None, {"bigger": BiggerEnv()}, 512)
    assert as_list(batch["total_reward"]) == [1.0]

    async def rows():
        return [index async for index, _ in generation.generate_async(data, greedy=True)]

    assert sorted(asyncio.run(rows())) == [0, 1]


def test_generate_responses_takes_a_nemo_style_generation() -> None:
    log = [{"role": "user", "content": "Say a number above 7."}]
    prompt = RENDERER.render_prompt(log, [])
    batch, generated, _ = generate_responses(
        GenerationInterfaceSampler(EchoGeneration(), RENDERER), {"input_ids": [prompt]}, {"message_log": [log]},
        None, [len(prompt)],
    )  # fmt: skip
    assert batch["message_log"][0][-1]["content"] == "8" and as_list(generated[0])[-1] == CharRenderer.END
    batch, _, _ = generate_responses(
        EchoGeneration(), {"input_ids": [prompt]}, {"message_log": [[]]}, RENDERER, [len(prompt)]
    )
    assert batch["message_log"][0][-1]["content"] == "8"
