"""The seed's switches on the batch API: the fenced-text tool path (default) vs the structured
(Hermes) protocol, and prompts that leave the model no room (marked, never scored 0.0).

The model is scripted over the dependency-free CharRenderer, as in test_llm_batch.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.errors import ConfigError
from rolloutgym.llm import (
    CharRenderer,
    ChatPolicy,
    Completion,
    PromptTooLong,
    ScriptedSampler,
    StructuredToolUseConfig,
    TokenPolicy,
    context_overflow,
    parse_fenced_tool_calls,
    parse_reply,
    run_multi_turn_rollout,
)
from rolloutgym.llm.http import ServerRefused

sys.path.insert(0, str(Path(__file__).parent))
from test_llm_batch import OPTIONS, TASK_TO_ENV, ScriptedBatch, mixed_batch  # noqa: E402

RENDERER = CharRenderer()
RECORDED = Path(__file__).parent / "data" / "batch_default_path.json"


def test_the_default_path_is_byte_identical_to_the_recorded_outputs() -> None:
    """Recorded before structured_cfg existed: users who pass nothing get the same tokens and rewards."""
    recorded = json.loads(RECORDED.read_text())
    batch, _ = run_multi_turn_rollout(ScriptedBatch(), mixed_batch(), TASK_TO_ENV, **OPTIONS, seed=7)
    for key, values in recorded.items():
        if key == "actions":
            assert [[step.action for step in t.steps] for t in batch.trajectories] == values
        else:
            assert batch[key] == values, key


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"name": "guess", "arguments": {"number": 50}}\n```',
        'Let me try.\n```tool_call\n{"name": "guess", "parameters": {"number": 50}}\n```',
        '```json\n[{"name": "guess", "arguments": "{\\"number\\": 50}"}]\n```',
    ],
)
def test_a_fenced_tool_call_is_a_tool_call_on_the_default_path(reply: str) -> None:
    parsed = parse_reply(reply, text_action=False, tool_names=frozenset({"guess"}), fenced=True)
    assert parsed.action["tool_calls"] == [{"id": "call_0", "name": "guess", "arguments": {"number": 50}}]
    assert not parsed.invalid and "```" not in parsed.content
    structured = parse_reply(reply, text_action=False, tool_names=frozenset({"guess"}), fenced=False)
    assert "tool_calls" not in structured.action  # the Hermes protocol only reads <tool_call> blocks


def test_fenced_blocks_that_are_not_calls_stay_text() -> None:
    for text in ('```json\n{"answer": 4}\n```', "```python\nprint(1)\n```", '```json\n{"name": "x"}\n```'):
        calls, remaining = parse_fenced_tool_calls(text)
        assert calls == [] and remaining == text
    parsed = parse_reply(
        '```json\n{"name": "guess", "arguments": [1]}\n```',
        text_action=False,
        tool_names=frozenset({"guess"}),
        fenced=True,
    )
    assert parsed.invalid and parsed.action["tool_calls"][0]["arguments"] == {}


def fenced_guess(prompt, _index) -> str:
    text = RENDERER.decode(prompt)
    return "I give up." if "tool\n" in text else '```json\n{"name": "guess", "arguments": {"number": 3}}\n```'


@pytest.mark.parametrize("structured", [None, StructuredToolUseConfig()])
def test_structured_cfg_switches_the_batch_path(structured) -> None:
    class Fenced(ScriptedBatch):
        def __init__(self) -> None:
            super().__init__()
            self.sampler = ScriptedSampler(RENDERER.encode, fenced_guess, end_token_id=CharRenderer.END)

    batch, _ = run_multi_turn_rollout(
        Fenced(), [{"task_name": "guess", "task": 0}], TASK_TO_ENV, **OPTIONS, structured_cfg=structured
    )
    first = batch.trajectories[0].steps[0].action
    assert ("tool_calls" in first) is (structured is None)
    assert batch["turn_count"] == ([2] if structured is None else [1])


def test_thinking_style_none_counts_any_think_tag() -> None:
    parsed = parse_reply("<think>hm</think>ok", text_action=True, thinking_style="none")
    assert parsed.malformed_thinking and not parse_reply("<think>hm</think>ok", text_action=True).malformed_thinking
    with pytest.raises(ConfigError, match="thinking_style"):
        StructuredToolUseConfig(thinking_style="qwen")


def test_a_prompt_longer_than_max_seq_len_is_marked_not_scored() -> None:
    """0 turns and reward 0.0 would be a reward for an answer never given: the sample is marked."""
    samples = [{"task_name": "arith", "task": 0}, {"task_name": "arith", "task": 1}]
    options = {**OPTIONS, "max_seq_len": 20}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batch, metrics = run_multi_turn_rollout(ScriptedBatch(), samples, TASK_TO_ENV, **options)
    assert batch["stop_reason"] == ["prompt_too_long", "prompt_too_long"]
    assert batch["total_reward"] == [None, None] and batch["turn_count"] == [0, 0]
    assert all(value is None for value in batch["reward/correct"])
    assert metrics["num_prompt_too_long"] == 2
    assert any("2 of 2 samples" in str(warning.message) and "max_seq_len" in str(warning.message) for warning in caught)


class ShortContextChat(ChatPolicy):
    """Solves toy arithmetic, but refuses a conversation over ``limit`` characters as vLLM's server does."""

    def __init__(self, limit: int) -> None:
        super().__init__(max_tokens=8)
        self.limit = limit

    async def complete(self, messages, tools, params):
        size = sum(len(str(message.get("content", ""))) for message in messages)
        if size > self.limit:
            message = f"This model's maximum context length is {self.limit} tokens. However, you requested {size}."
            raise ServerRefused("HTTP 400", status=400, server_message=message)
        a, operator, b = re.search(r"What is (-?\d+) ([-+*]) (-?\d+)\?", messages[-1]["content"]).groups()
        return Completion(text=str(eval(f"{a}{operator}{b}")))  # noqa: S307 - digits and an operator


def test_a_chat_backend_refusing_a_long_prompt_marks_it_and_show_leaves_it_out(tmp_path: Path, capsys) -> None:
    """The rule of the batch API in ChatPolicy rollouts and run summaries: no answer, no score."""
    out = tmp_path / "run.jsonl"
    result = rg.run("toy/arith-v0", policy=ShortContextChat(44), limit=3, out=str(out))  # prompts of 45, 45, 44
    stops = {group.item_id: [t.stop_reason for t in group.trajectories] for group in result.groups}
    assert stops == {"arith-00": ["prompt_too_long"], "arith-01": ["prompt_too_long"], "arith-02": ["terminated"]}
    summary = result.summary
    assert summary.num_prompt_too_long == 2 and summary.num_trajectories == 1 and summary.pass_rate == 1.0
    assert main(["show", str(out)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "prompt too long: 2 trajectories ended before the model spoke" in printed and "pass rate 100.0%" in printed
    assert "1 trajectories (+2 unanswered: prompt too long)" in printed
    from rolloutgym.export._common import iter_records  # what every training-data exporter reads
    from rolloutgym.runs import read_run

    assert [record.task_id for record in iter_records(read_run(out))] == ["arith-02"]  # no reward for no answer


def test_a_sampler_refusing_the_first_prompt_ends_the_token_loop_the_same_way() -> None:
    class Refusing:
        async def sample(self, prompt_token_ids, params):
            raise PromptTooLong("the prompt does not fit")

    environment = rg.make("toy/arith-v0", task=0)
    trajectory = rg.rollout(environment, TokenPolicy(Refusing(), RENDERER))
    assert trajectory.stop_reason == "prompt_too_long" and not trajectory.steps[-1].policy_tokens
    prompt = RENDERER.render_prompt(environment.reset(seed=0)[0], [])
    assert list(trajectory.steps[0].observation_tokens) == prompt  # recorded once
    assert context_overflow(ServerRefused("x", status=400, server_message="context_length_exceeded"))
    assert not context_overflow(ServerRefused("x", status=401, server_message="maximum context length"))
    assert not context_overflow(ValueError("maximum context length"))
