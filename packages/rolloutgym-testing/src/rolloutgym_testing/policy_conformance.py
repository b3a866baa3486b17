"""``PolicyConformanceTests``: the tests every policy adapter plugin runs.

Subclass it and implement :meth:`make_policy` (a test double of the remote service,
e.g. a local HTTP server, is the adapter's business)::

    class TestOpenAIPolicy(PolicyConformanceTests):
        def make_policy(self):
            return make_policy(f"openai:test-model", base_url=self.server_url)

Checks, on the built-in ``toy`` environments: a text env episode completes with actions
in the action space; a tool-calling env episode completes (tool calls are well-formed or
recorded as invalid actions by the env, never crash the rollout); when the policy reports
tokens and logprobs they line up one to one; several episodes run concurrently.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rolloutgym_protocol import Trajectory

__all__ = ["PolicyConformanceTests"]


class PolicyConformanceTests:
    """Inherit in a ``Test*`` class and implement :meth:`make_policy`."""

    text_env_id = "toy/arith-v0"
    tool_env_id = "toy/guess-v0"
    max_steps = 4
    concurrent_episodes = 4

    def make_policy(self) -> Any:
        raise NotImplementedError("PolicyConformanceTests subclasses implement make_policy()")

    def _episode(self, env_id: str, task: int, policy: Any) -> Trajectory:
        from rolloutgym.registry import get_registry
        from rolloutgym.rollouts import arollout

        async def go() -> Trajectory:
            environment = get_registry().make(env_id, task=task)
            try:
                return await arollout(environment, policy, seed=0, max_steps=self.max_steps)
            finally:
                environment.close()

        return asyncio.run(go())

    def test_text_env_episode(self) -> None:
        policy = self.make_policy()
        trajectory = self._episode(self.text_env_id, 0, policy)
        from rolloutgym.registry import get_registry

        space = get_registry().make(self.text_env_id).action_space
        assert trajectory.steps, "the policy produced no step"
        for step in trajectory.steps:
            assert space.contains(step.action), f"action {step.action!r:.200} is not in {space!r}"

    def test_tool_env_episode(self) -> None:
        trajectory = self._episode(self.tool_env_id, 0, self.make_policy())
        assert trajectory.steps, "the policy produced no step"
        for step in trajectory.steps:
            assert isinstance(step.action, dict) and step.action.get("role") == "assistant", (
                f"tool env actions must be assistant messages, got {step.action!r:.200}"
            )

    def test_tokens_and_logprobs_line_up(self) -> None:
        trajectory = self._episode(self.text_env_id, 1, self.make_policy())
        for step in trajectory.steps:
            if step.policy_tokens is not None and step.policy_logprobs is not None:
                assert len(step.policy_tokens) == len(step.policy_logprobs), "one logprob per sampled token"

    def test_concurrent_episodes(self) -> None:
        from rolloutgym.registry import get_registry
        from rolloutgym.rollouts import arollout_group

        policy = self.make_policy()
        group = asyncio.run(
            arollout_group(
                0,
                lambda task: get_registry().make(self.text_env_id, task=task),
                policy,
                num_rollouts=self.concurrent_episodes,
                concurrency=self.concurrent_episodes,
                max_steps=self.max_steps,
            )
        )
        assert not group.errors, f"concurrent episodes failed: {[e.error_message for e in group.errors]}"
        assert len(group.trajectories) == self.concurrent_episodes
