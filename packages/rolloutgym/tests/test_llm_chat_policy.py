"""The message-level ChatPolicy with a scripted backend that answers like an OpenAI server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.builtin.toy import ArithmeticEnv, GuessNumberEnv, arith_tasks, guess_tasks
from rolloutgym.llm import ChatPolicy, Completion, SamplingParams, metrics, to_openai_messages
from rolloutgym.rollouts import arollout


class ScriptedServer(ChatPolicy):
    """Replies from a list; reports prompt tokens as the characters of the JSON conversation."""

    def __init__(self, replies: list[Mapping[str, Any]], *, drift: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.replies = replies
        self.seen: list[tuple[list[dict[str, Any]], list[dict[str, Any]], SamplingParams]] = []
        self.drift = drift
        self.rendered = 0
        self.context: list[int] = []

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], params: SamplingParams
    ) -> Completion:
        self.seen.append((list(messages), list(tools), params))
        reply = self.replies[len(self.seen) - 1]
        # Like a server that keeps the history's tokens: the prompt is the previous prompt,
        # the previous completion, then the new messages.
        new = to_openai_messages(messages[self.rendered :])
        self.rendered = len(messages) + 1
        prompt = self.context + [ord(character) for character in "".join(json.dumps(message) for message in new)]
        if self.drift and len(self.seen) > 1:
            prompt[0] += 1  # a server that re-rendered the history differently
        completion_text = json.dumps(reply)
        tokens = [ord(character) for character in completion_text]
        self.context = prompt + tokens
        return Completion(
            message=reply,
            tokens=tokens,
            logprobs=[-0.1] * len(tokens),
            prompt_tokens=prompt,
            stop_reason="stop",
            usage={"prompt_tokens": len(prompt), "completion_tokens": len(tokens)},
        )


def guess_call(number: int, call_id: str = "c") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "guess", "arguments": json.dumps({"number": number})},
            }
        ],
    }


def test_tool_calls_from_an_openai_style_server_drive_the_env() -> None:
    task = guess_tasks()[4]
    policy = ScriptedServer([guess_call(task.target)], temperature=0.2, max_tokens=50)
    trajectory = asyncio.run(arollout(GuessNumberEnv(task), policy, max_steps=5))
    assert trajectory.score.value == 1.0
    messages, tools, params = policy.seen[0]
    assert tools == GuessNumberEnv.tools and params.temperature == 0.2 and params.max_tokens == 50
    assert messages[0]["role"] == "system"
    step = trajectory.steps[0]
    assert step.action["tool_calls"] == [{"id": "c", "name": "guess", "arguments": {"number": task.target}}]
    assert step.policy_info["usage"]["completion_tokens"] == len(step.policy_tokens)


def test_the_conversation_grows_and_invalid_arguments_are_counted() -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "b", "type": "function", "function": {"name": "guess", "arguments": "{not json"}}],
    }
    policy = ScriptedServer([bad, {"role": "assistant", "content": "I give up"}])
    trajectory = asyncio.run(arollout(GuessNumberEnv(guess_tasks()[0]), policy, max_steps=5))
    assert len(trajectory) == 2
    second_call_messages = policy.seen[1][0]
    assert [message["role"] for message in second_call_messages] == ["system", "user", "assistant", "tool"]
    assert second_call_messages[2]["tool_calls"][0]["arguments"] == {}
    assert metrics([trajectory])["invalid_action_count"] == 1
    assert trajectory.steps[-1].policy_info["usage_total"]["completion_tokens"] > 0


def test_prompt_tokens_give_incremental_observation_tokens() -> None:
    task = guess_tasks()[6]
    first = task.low if task.low != task.target else task.high
    policy = ScriptedServer([guess_call(first, "a"), guess_call(task.target, "b")])
    trajectory = asyncio.run(arollout(GuessNumberEnv(task), policy, max_steps=5))
    assert len(trajectory) == 2 and trajectory.score.value == 1.0
    second = trajectory.steps[1]
    # the observation tokens of turn 2 are exactly the tool message the env sent
    assert "".join(map(chr, second.observation_tokens)) == json.dumps(
        to_openai_messages(trajectory.steps[0].next_observation)[0]
    )
    assert metrics([trajectory])["retokenization_mismatches"] == 0
    drifting = ScriptedServer([guess_call(first, "a"), guess_call(task.target, "b")], drift=True)
    trajectory = asyncio.run(arollout(GuessNumberEnv(task), drifting, max_steps=5))
    assert trajectory.steps[1].policy_info["retokenization_mismatch"] is True
    assert metrics([trajectory])["retokenization_mismatches"] == 1


def test_text_envs_get_text() -> None:
    task = arith_tasks()[1]
    policy = ScriptedServer([{"role": "assistant", "content": f"<think>hmm</think>{task.answer}"}])
    trajectory = asyncio.run(arollout(ArithmeticEnv(task), policy))
    assert trajectory.steps[0].action == str(task.answer) and trajectory.score.value == 1.0


def test_max_turns() -> None:
    policy = ScriptedServer([guess_call(1), guess_call(1)], max_turns=1)
    trajectory = asyncio.run(arollout(GuessNumberEnv(guess_tasks()[5]), policy, max_steps=5))
    assert len(policy.seen) == 1 and trajectory.steps[-1].policy_stop_reason == "max_turns"
