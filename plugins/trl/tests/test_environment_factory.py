"""``environment_factory``: a tool env as the class TRL's GRPOTrainer drives with its own tool loop."""

from __future__ import annotations

import inspect

import pytest
import rolloutgym as rg
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import environment_factory, train_grpo
from rolloutgym_trl.environment import tool_method


def test_methods_reproduce_the_tool_space() -> None:
    from transformers.utils import get_json_schema

    factory = environment_factory("toy/guess-v0")
    instance = factory()
    public = [
        name for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction) if not name.startswith("_")
    ]
    assert public == ["guess", "reset"]  # what TRL exposes: the tools (reset is the episode hook)
    schema = get_json_schema(instance.guess)["function"]
    tool = factory.tools[0]["function"]
    assert schema["name"] == tool["name"] == "guess"
    assert schema["description"] == tool["description"]
    assert schema["parameters"]["properties"]["number"]["type"] == "integer"
    assert schema["parameters"]["required"] == ["number"]


def test_optional_arguments_and_enums_survive() -> None:
    from transformers.utils import get_json_schema

    method = tool_method(
        {
            "type": "function",
            "function": {
                "name": "refund",
                "description": "Refund an order.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string", "enum": ["damaged", "late"], "description": "Why."},
                        "order_id": {"type": "integer", "description": "The order."},
                    },
                    "required": ["order_id"],
                },
            },
        }
    )
    schema = get_json_schema(method)["function"]["parameters"]
    assert schema["required"] == ["order_id"]
    assert schema["properties"]["reason"]["enum"] == ["damaged", "late"]
    assert schema["properties"]["order_id"] == {"type": "integer", "description": "The order."}


def test_tools_step_the_env_and_the_reward_is_its_score() -> None:
    factory = environment_factory("toy/guess-v0")
    row = factory.train_dataset[0]
    task = rg.get_registry().resolve_task("toy/guess-v0", row["task_id"])[1]
    instance = factory()
    assert instance.reset(**row) is None  # the prompt column already holds the first observation
    wrong = task.target + 1 if task.target < task.high else task.target - 1
    assert instance.guess(number=wrong) in ("higher", "lower")
    assert instance.guess(task.target) == "correct"
    assert instance.guess(1).startswith("error: the episode is over")
    logged = {}
    rewards = factory.reward_funcs[0](
        prompts=[row["prompt"]],
        completions=[[{"role": "assistant", "content": "found it"}]],
        environments=[instance],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert rewards == [1.0]
    assert logged["rolloutgym/pass_rate"] == 1.0 and logged["rolloutgym/found"] == 1.0


def test_a_final_answer_without_tool_calls_is_sent_to_the_env() -> None:
    factory = environment_factory("toy/guess-v0")
    instance = factory()
    instance.reset(**factory.train_dataset[1])
    rewards = factory.reward_funcs[0](
        prompts=[[]], completions=[[{"role": "assistant", "content": "no idea"}]], environments=[instance]
    )
    assert rewards == [0.0]
    assert "answered without finding" in instance.score.feedback


def test_an_env_without_tools_points_to_rollout_func() -> None:
    with pytest.raises(ConfigError, match="no tool space.*rollout_func"):
        environment_factory("toy/arith-v0")


def test_a_template_trl_cannot_parse_is_named_before_training(tmp_path) -> None:
    with pytest.raises(ConfigError, match="--chat-template qwen2_5"):
        train_grpo("toy/guess-v0", "hf:tiny", out=tmp_path / "m", steps=1, mode="environment_factory", evaluate=False)


@pytest.mark.slow
def test_grpo_trainer_runs_the_env_through_its_tool_loop(tmp_path) -> None:
    result = train_grpo(
        "toy/guess-v0",
        "hf:tiny",
        out=tmp_path / "m",
        steps=2,
        mode="environment_factory",
        chat_template="qwen2_5",
        max_tokens=16,
        num_generations=2,
        prompts_per_step=1,
        evaluate=False,
        threads=1,
    )
    assert len(result.curve("reward")) == 2
    # TRL called our reward function, which read the env's Score and its component
    assert len(result.curve("rolloutgym/found")) == 2
    assert all("tools/call_frequency" in record for record in result.records if "reward" in record)
