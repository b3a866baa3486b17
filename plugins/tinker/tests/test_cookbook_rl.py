"""The tinker-cookbook RL adapter, driven by the cookbook's own rollout and data-processing code.

The Tinker service is unreachable here: ``StandInSamplingClient`` answers in the SDK's types
(``tinker.ModelInput`` in, ``SampleResponse`` out) behind the cookbook's own
``TinkerTokenCompleter``; the renderer is the cookbook's ``qwen3_instruct`` over a byte-level
tokenizer built in code and saved to a local folder (the builder loads it by path, as it
would load a hub tokenizer). Everything from ``do_group_rollout`` to ``tinker.Datum`` is the
cookbook's code; the checks compare the datums with the rolloutgym trajectories token by token.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from typing import Any

import pytest

pytest.importorskip(
    "tinker_cookbook", reason="tinker-cookbook is not installed (pip install 'rolloutgym-tinker[cookbook]')"
)

import rolloutgym as rg  # noqa: E402
from rolloutgym.llm import check_provenance  # noqa: E402
from rolloutgym_tinker.cookbook_rl import (  # noqa: E402
    RolloutGymDatasetBuilder,
    RolloutGymEnv,
    RolloutGymRLDataset,
    builders_for_split,
)
from rolloutgym_tinker.testing import StandInSamplingClient, byte_tokenizer  # noqa: E402
from tinker_cookbook.completers import TinkerTokenCompleter  # noqa: E402
from tinker_cookbook.rl.data_processing import assemble_training_data, compute_advantages  # noqa: E402
from tinker_cookbook.rl.rollouts import do_group_rollout  # noqa: E402

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


def encode(text: str) -> list[int]:
    return TOKENIZER.encode(text, add_special_tokens=False)


def call(number: int) -> list[int]:
    return encode(f"<tool_call>\n{json.dumps({'name': 'guess', 'arguments': {'number': number}})}\n</tool_call>") + [
        END
    ]


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("tokenizer")
    TOKENIZER.save_pretrained(folder)
    return str(folder)


def test_builders_pickle_and_batch(tokenizer_folder: str) -> None:
    builders = builders_for_split(
        "toy/guess-v0", split="train", group_size=2, renderer_name="qwen3_instruct", model_name=tokenizer_folder
    )
    assert len(builders) == 18
    copy = pickle.loads(pickle.dumps(builders[3]))
    assert copy == builders[3]
    dataset = RolloutGymRLDataset(builders, batch_size=4, seed=0)
    assert len(dataset) == 4 and len(dataset.get_batch(3)) == 4
    assert sorted(builder.task_id for index in range(4) for builder in dataset.get_batch(index)) != []
    with pytest.raises(IndexError):
        dataset.get_batch(4)


def test_dataset_builder_names_an_env(tokenizer_folder: str) -> None:
    builder = RolloutGymDatasetBuilder(
        env_id="toy/guess-v0",
        model_name_for_tokenizer=tokenizer_folder,
        renderer_name="qwen3_instruct",
        batch_size=4,
        group_size=2,
    )
    train, test = asyncio.run(builder())
    assert len(train) == 4  # 18 train tasks -> 4 full batches of 4
    assert test is not None and len(test) == 1  # 6 test tasks -> one batch of 4
    assert all(group.env_id == "toy/guess-v0" for group in train.get_batch(0))


def test_a_cookbook_rl_config_takes_the_builder(tokenizer_folder: str) -> None:
    """The config of docs/how-to/train-with-tinker-cookbook.md (train.main would then call Tinker)."""
    from tinker_cookbook.rl import train

    config = train.Config(
        model_name="Qwen/Qwen3-8B",
        recipe_name="rolloutgym_guess_rl",
        log_path="/tmp/guess-rl",
        learning_rate=4e-5,
        max_tokens=256,
        dataset_builder=RolloutGymDatasetBuilder(
            env_id="toy/guess-v0",
            model_name_for_tokenizer=tokenizer_folder,
            renderer_name="qwen3",
            batch_size=8,
            group_size=4,
        ),
    )
    train_set, _ = asyncio.run(config.dataset_builder())
    assert len(train_set) == 2 and train_set.get_batch(0)[0].group_size == 4


def test_group_rollout_gives_token_exact_datums_and_score_rewards(tokenizer_folder: str) -> None:
    builder = pickle.loads(
        pickle.dumps(
            builders_for_split(
                "toy/guess-v0", split="train", group_size=2, renderer_name="qwen3_instruct", model_name=tokenizer_folder
            )[0]
        )
    )
    target = rg.get_registry().resolve_task("toy/guess-v0", builder.task_id)[1].target
    wrong = target + 1 if target < 10 else target - 1

    def reply(prompt: list[int], index: int) -> list[int]:
        # the member that asks first makes a wrong guess, then finds it; the other gives up
        if index == 0:
            return call(wrong)
        if "<tool_response>" in TOKENIZER.decode(prompt):
            return call(target)
        return encode("I give up") + [END]

    client = StandInSamplingClient(reply, logprob=-0.5)
    completer = TinkerTokenCompleter(client, max_tokens=64)

    async def go() -> Any:
        environments_made: list[Any] = []
        original = builder.make_envs

        async def make_envs() -> Any:
            environments = await original()
            environments_made.extend(environments)
            return environments

        object.__setattr__(builder, "make_envs", make_envs)
        group = await do_group_rollout(builder, completer)
        return group, environments_made

    group, environments = asyncio.run(go())
    assert sorted(group.get_total_rewards()) == [0.0, 1.0]  # the env's Score, through compute_group_rewards
    winner = next(index for index, environment in enumerate(environments) if environment.score.value == 1.0)
    assert all(isinstance(environment, RolloutGymEnv) for environment in environments)
    assert group.metrics_G[winner]["rolloutgym/found"] == 1.0

    advantages = compute_advantages([group])
    data, metadata = assemble_training_data([group], advantages)
    assert len(data) == 2  # every observation extends the previous one: one datum per episode
    for datum, info in zip(data, metadata, strict=True):
        environment = environments[info["traj_idx"]]
        trajectory = environment.trajectory
        assert check_provenance(trajectory) == 0
        # the rolloutgym trajectory's tokens are exactly the datum's sequence
        tokens: list[int] = []
        trained: list[int] = []
        for step in trajectory.steps:
            tokens += list(step.observation_tokens) + list(step.policy_tokens)
            trained += [0] * len(step.observation_tokens) + [1] * len(step.policy_tokens)
        inputs = datum.model_input.to_ints()
        targets = datum.loss_fn_inputs["target_tokens"].to_torch().tolist()
        assert inputs == tokens[:-1] and targets == tokens[1:]
        mask = datum.loss_fn_inputs["mask"].to_torch().tolist()
        assert mask == [float(flag) for flag in trained[1:]]
        advantage = float(advantages[0][info["traj_idx"]])
        assert advantage == (0.5 if info["traj_idx"] == winner else -0.5)
        assert datum.loss_fn_inputs["advantages"].to_torch().tolist() == [advantage * flag for flag in trained[1:]]
        logprobs = datum.loss_fn_inputs["logprobs"].to_torch().tolist()
        assert logprobs == [-0.5 * flag for flag in trained[1:]]
    # the winner's second prompt carries the env's reply in Qwen's tool envelope, masked out
    winner_steps = environments[winner].trajectory.steps
    assert len(winner_steps) == 2
    assert "<tool_response>\nhigher" in TOKENIZER.decode(list(winner_steps[1].observation_tokens)) or (
        "<tool_response>\nlower" in TOKENIZER.decode(list(winner_steps[1].observation_tokens))
    )


def test_an_env_that_raises_is_a_zero_reward_not_a_crash(
    tokenizer_folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rolloutgym.builtin.toy import GuessNumberEnv

    def broken_step(self: Any, action: Any) -> Any:
        raise RuntimeError("the env's backend went away")

    monkeypatch.setattr(GuessNumberEnv, "step", broken_step)
    builder = builders_for_split(
        "toy/guess-v0", split="train", group_size=1, renderer_name="qwen3_instruct", model_name=tokenizer_folder
    )[0]
    completer = TinkerTokenCompleter(StandInSamplingClient([call(3)]), max_tokens=64)
    group = asyncio.run(do_group_rollout(builder, completer))
    assert group.get_total_rewards() == [0.0]
    assert group.metrics_G[0]["rolloutgym/error"] == 1.0
