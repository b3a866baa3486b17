"""The token-exact LLM loop: drive any chat environment with a language model.

Two base policies, both environment-aware (the engine calls ``for_env(env)`` per episode):

* :class:`TokenPolicy` — token level, over a :class:`Sampler` (token ids in, token ids and
  logprobs out) and a :class:`Renderer` (chat messages to token ids, incrementally). The
  sampled tokens and the observation tokens are recorded verbatim, so a trajectory's
  token sequence is exactly what the model saw and produced (checked every turn:
  ``retokenization_mismatches``).
* :class:`ChatPolicy` — message level, for servers that apply their own chat template;
  subclasses implement ``complete(messages, tools, params) -> Completion``.

Both parse replies into the env's action (text, OpenAI-style tool calls, or Hermes
``<tool_call>`` blocks), count invalid actions and malformed ``<think>`` blocks, honour
``max_turns`` and env-set stop strings. :func:`metrics` summarises trajectories;
:func:`trajectory_tokens` gives a trajectory's input ids, loss mask and logprobs.

:func:`run_multi_turn_rollout` (and its async twin) is the trainer-facing batch API: a
mixed batch of tasks, one batched generation call (:class:`BatchSampler`) per wave of
active samples, results as a :class:`RolloutBatch` of token ids, loss masks, logprobs,
rewards and reward components.
The seed's own names and argument order are in :mod:`rolloutgym.llm.rollouts`
(``run_multi_turn_rollout``, ``run_async_multi_turn_rollout`` free-running, ``calculate_rewards``,
...) and NeMo-RL-style batched envs, both ways, in :mod:`rolloutgym.llm.environments`.
See ``INTERFACE.md`` in this folder for the contract adapter plugins build on.
"""

from ._episode import token_digest
from .batch import arun_multi_turn_rollout, run_multi_turn_rollout
from .chat_policy import ChatEpisode, ChatPolicy
from .configs import InvalidActionPenaltyConfig, StructuredToolUseConfig, parse_fenced_tool_calls
from .generation import BatchSampler, ConcurrentBatchSampler, as_batch_sampler
from .messages import content_text, env_tools, from_openai_message, observation_messages, to_openai_messages, tool_names
from .metrics import TokenSequence, check_provenance, metrics, trajectory_tokens
from .parsing import ParsedReply, is_thinking_malformed, parse_hermes_tool_calls, parse_reply, strip_thinking
from .renderers import CHATML_TEMPLATE, ChatTemplateRenderer, Renderer, hermes_tool_prompt
from .rollout_batch import RolloutBatch
from .sampling import STOP_REASONS, Completion, PromptTooLong, Sample, Sampler, SamplingParams, context_overflow
from .testing import CharRenderer, ScriptedSampler
from .token_policy import TokenEpisode, TokenPolicy

__all__ = [
    "BatchSampler",
    "CHATML_TEMPLATE",
    "CharRenderer",
    "STOP_REASONS",
    "ChatEpisode",
    "ChatPolicy",
    "ChatTemplateRenderer",
    "Completion",
    "ConcurrentBatchSampler",
    "InvalidActionPenaltyConfig",
    "ParsedReply",
    "PromptTooLong",
    "Renderer",
    "RolloutBatch",
    "Sample",
    "Sampler",
    "StructuredToolUseConfig",
    "SamplingParams",
    "ScriptedSampler",
    "TokenEpisode",
    "TokenPolicy",
    "TokenSequence",
    "arun_multi_turn_rollout",
    "as_batch_sampler",
    "check_provenance",
    "content_text",
    "context_overflow",
    "env_tools",
    "from_openai_message",
    "hermes_tool_prompt",
    "is_thinking_malformed",
    "metrics",
    "observation_messages",
    "parse_fenced_tool_calls",
    "parse_hermes_tool_calls",
    "parse_reply",
    "run_multi_turn_rollout",
    "strip_thinking",
    "to_openai_messages",
    "token_digest",
    "tool_names",
    "trajectory_tokens",
]
