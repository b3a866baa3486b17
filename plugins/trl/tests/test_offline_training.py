"""SFT and DPO from run files with TRL's trainers, and the errors a user meets first."""

from __future__ import annotations

import json

import pytest
import rolloutgym as rg
from rolloutgym.llm import CharRenderer, ChatTemplateRenderer
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import train_dpo, train_sft
from rolloutgym_trl._conversations import render_conversation

EVALUATION = {"eval_rollouts": 2, "policy_options": {"max_tokens": 8, "seed": 0}, "threads": 1}


def _run(tmp_path, env_id: str, policy: str, name: str, **options) -> str:
    out = tmp_path / name
    rg.run(env_id, policy=policy, out=out, seed=0, **options)
    return str(out)


def test_tool_conversations_render_like_the_policy_sees_them() -> None:
    """The completion holds the model's Hermes calls (trained) and the env's replies (masked)."""
    renderer = CharRenderer()
    messages = [
        {"role": "user", "content": "find it"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "name": "guess", "arguments": {"number": 5}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "higher"},
        {"role": "assistant", "content": "done"},
    ]
    rendered = render_conversation(renderer, messages, [])
    assert rendered.prompt_ids == renderer.render_prompt(messages[:1], [])
    trained = renderer.decode(
        [t for t, keep in zip(rendered.completion_ids, rendered.completion_mask, strict=True) if keep]
    )
    masked = renderer.decode(
        [t for t, keep in zip(rendered.completion_ids, rendered.completion_mask, strict=True) if not keep]
    )
    assert trained == '<tool_call>\n{"name": "guess", "arguments": {"number": 5}}\n</tool_call>done'
    assert "higher" in masked and "guess" not in masked
    # the parse the LLM loop applies to the trained reply gives back the same call
    from rolloutgym.llm import parse_hermes_tool_calls

    first_reply = renderer.decode(rendered.completion_ids[: rendered.completion_mask.index(0)])
    calls, problems, _ = parse_hermes_tool_calls(first_reply)
    assert not problems
    assert calls[0]["name"] == "guess" and calls[0]["arguments"] == {"number": 5}


@pytest.mark.slow
def test_sft_on_oracle_runs_teaches_the_format(tmp_path) -> None:
    run = _run(tmp_path, "trl/digits-v0", "oracle", "oracle.jsonl", split="train")
    result = train_sft([run], "hf:tiny", out=tmp_path / "sft", steps=30, learning_rate=5e-3, batch_size=8, **EVALUATION)
    losses = result.curve("loss")
    assert losses[-1] < losses[0] / 2
    comparison = result.comparison
    assert comparison.before.mean_reward < 0.2
    assert comparison.after.mean_reward > 0.5
    assert result.extra["examples"] == 24
    # the saved model works as a policy
    evaluation = rg.run(
        "trl/digits-v0",
        policy=f"hf:{tmp_path / 'sft'}",
        split="test",
        out=None,
        limit=2,
        policy_options={"max_tokens": 8},
    )
    assert evaluation.summary.num_trajectories == 2


@pytest.mark.slow
def test_dpo_on_sampled_runs_prefers_the_better_episode(tmp_path) -> None:
    run = _run(
        tmp_path,
        "trl/digits-v0",
        "hf:tiny",
        "tiny.jsonl",
        split="train",
        num_rollouts=4,
        policy_options={"max_tokens": 8, "seed": 0},
    )
    result = train_dpo(
        [run], "hf:tiny", out=tmp_path / "dpo", steps=12, learning_rate=5e-3, batch_size=8, evaluate=False, threads=1
    )
    losses = result.curve("loss")
    assert losses[0] == pytest.approx(0.6931, abs=1e-3)  # log 2: the policy starts equal to its reference
    assert losses[-1] < 0.5
    assert result.extra["pairs"] >= 10
    header = json.loads(result.log_path.read_text().splitlines()[0])
    assert header["trainer"] == "dpo" and header["pairs"] == result.extra["pairs"]


def test_sft_without_passing_trajectories_says_so(tmp_path) -> None:
    run = _run(tmp_path, "trl/digits-v0", "null", "null.jsonl", limit=3)
    with pytest.raises(ConfigError, match="no passing trajectories.*--policy oracle"):
        train_sft([run], "hf:tiny", out=tmp_path / "m", evaluate=False)


def test_dpo_without_reward_variance_says_so(tmp_path) -> None:
    run = _run(tmp_path, "trl/digits-v0", "oracle", "oracle.jsonl", limit=3, num_rollouts=2)
    with pytest.raises(ConfigError, match="no reward variance.*-n 4"):
        train_dpo([run], "hf:tiny", out=tmp_path / "m", evaluate=False)


def test_a_missing_model_path_is_named(tmp_path) -> None:
    run = _run(tmp_path, "trl/digits-v0", "oracle", "oracle.jsonl", limit=2)
    with pytest.raises(ConfigError, match="no such file or folder './no-such-model'"):
        train_sft([run], "hf:./no-such-model", out=tmp_path / "m", evaluate=False)


def test_a_missing_run_file_is_named(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no run file"):
        train_sft([tmp_path / "missing.jsonl"], "hf:tiny", out=tmp_path / "m")


def test_chat_template_renderer_renders_tool_turns_of_a_real_run(tmp_path) -> None:
    """An oracle run of the tool env, rendered with the tiny model's real tokenizer."""
    from rolloutgym.export import conversation
    from rolloutgym.runs import read_run
    from rolloutgym_transformers import build_tiny

    _, tokenizer = build_tiny()
    run = read_run(_run(tmp_path, "toy/guess-v0", "oracle", "guess.jsonl", limit=1))
    trajectory = run.groups[0].trajectories[0]
    rendered = render_conversation(ChatTemplateRenderer(tokenizer), conversation(trajectory, openai_format=False), [])
    trained = tokenizer.decode(
        [t for t, keep in zip(rendered.completion_ids, rendered.completion_mask, strict=True) if keep]
    )
    assert trained.count("<tool_call>") == len(trajectory.steps)
    assert sum(rendered.completion_mask) < len(rendered.completion_mask)  # tool replies are masked
