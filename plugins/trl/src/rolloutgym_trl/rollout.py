"""A ``rollout_func`` for TRL's ``GRPOTrainer`` that plays episodes with rolloutgym's LLM loop.

``GRPOTrainer(rollout_func=RolloutFunction(), reward_funcs=[env_reward], ...)`` trains on
any registered env (text actions, tool calls, many turns, several envs mixed in one
dataset): for each prompt the function finds the task (the prompt's ``rolloutgym_task``
key, see :mod:`rolloutgym_trl.datasets`), runs a group of episodes with
:func:`rolloutgym.arollout_group` and a :class:`rolloutgym.llm.TokenPolicy` that samples from
the model being trained, and hands TRL exactly the recorded tokens:

* ``prompt_ids``: the first prompt (the env's first observation, rendered);
* ``completion_ids``: every later token in order, sampled turns and the env's replies;
* ``env_mask``: 1 on sampled tokens, 0 on env tokens (TRL leaves those out of the loss);
* ``logprobs``: the sampler's logprob per sampled token (0.0 on env tokens);
* ``env_reward`` / ``env_passed`` / ``env_score``: the env's Score, read by :func:`env_reward`.

A member whose episode failed (a :class:`rolloutgym.RolloutError`) gets one masked
token and reward ``None``: TRL leaves it out of the group baseline and gives it no advantage.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError

from .datasets import TASK_KEY, split_task_key

__all__ = ["RolloutFunction", "env_reward", "episode_tensors"]


def _prompt_task_key(prompt: Any) -> str:
    if isinstance(prompt, Sequence) and not isinstance(prompt, str):
        for message in reversed(list(prompt)):
            if isinstance(message, Mapping) and isinstance(message.get(TASK_KEY), str):
                return str(message[TASK_KEY])
    raise ConfigError(
        "a prompt given to the rolloutgym rollout_func does not name its task; build the train_dataset with "
        "rolloutgym_trl.train_dataset(ENV_ID) (its prompts carry a 'rolloutgym_task' key)"
    )


def episode_tensors(trajectory: Trajectory, *, pad_token_id: int) -> dict[str, Any]:
    """One trajectory as TRL's rollout fields: prompt ids, completion ids, env mask, logprobs.

    The first step's observation tokens are the prompt; everything after them is the
    completion, with the env's tokens masked out. A trajectory with no sampled token gets
    a single masked ``pad_token_id`` so that TRL's tensors stay rectangular.
    """
    prompt_ids: list[int] = []
    completion_ids: list[int] = []
    env_mask: list[int] = []
    logprobs: list[float] = []
    for index, step in enumerate(trajectory.steps):
        observed = list(step.observation_tokens or ())
        if index == 0:
            prompt_ids = observed
        else:
            completion_ids.extend(observed)
            env_mask.extend([0] * len(observed))
            logprobs.extend([0.0] * len(observed))
        sampled = list(step.policy_tokens or ())
        completion_ids.extend(sampled)
        env_mask.extend([1] * len(sampled))
        recorded = step.policy_logprobs
        if recorded is not None and len(recorded) == len(sampled):
            logprobs.extend(float(value) for value in recorded)
        else:
            logprobs.extend([0.0] * len(sampled))
    if not any(env_mask):
        completion_ids, env_mask, logprobs = [pad_token_id], [0], [0.0]
    if not prompt_ids:
        prompt_ids = [pad_token_id]
    return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "env_mask": env_mask, "logprobs": logprobs}


class RolloutFunction:
    """``rollout_func`` for ``GRPOTrainer``: episodes of registered envs, token-exact.

    Args:
        max_tokens: tokens sampled per assistant turn (default: the trainer's
            ``max_completion_length``).
        max_turns: assistant turns per episode (default: the env's step budget).
        max_seq_len: tokens per episode, prompt included (default: none beyond the model's).
        env_kwargs: keyword arguments for every env factory.
        concurrency: episodes of one group run at once (env steps overlap; sampling is
            serialised on the model).
        seed: base sampling seed; each episode and turn gets its own seed from it.
        chat_template: a Jinja chat template replacing the tokenizer's.

    Attributes:
        last_groups: the :class:`rolloutgym.TrajectoryGroup`\\ s of the latest call (for logs).
    """

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        max_turns: int | None = None,
        max_seq_len: int | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        concurrency: int = 8,
        seed: int | None = 0,
        chat_template: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.max_seq_len = max_seq_len
        self.env_kwargs = dict(env_kwargs or {})
        self.concurrency = concurrency
        self.seed = seed
        self.chat_template = chat_template
        self.last_groups: list[Any] = []
        self._policy: Any = None
        self._model: Any = None

    def _token_policy(self, trainer: Any) -> Any:
        from rolloutgym.llm import ChatTemplateRenderer, TokenPolicy
        from rolloutgym_transformers import TransformersSampler

        model = trainer.accelerator.unwrap_model(trainer.model)
        if self._policy is not None and self._model is model:
            return self._policy
        tokenizer = trainer.processing_class
        arguments = trainer.args
        sampler = TransformersSampler(model, tokenizer, device=str(trainer.accelerator.device), name="trl-policy")
        self._policy = TokenPolicy(
            sampler,
            ChatTemplateRenderer(tokenizer, chat_template=self.chat_template),
            max_tokens=self.max_tokens or int(arguments.max_completion_length or 256),
            max_seq_len=self.max_seq_len,
            max_turns=self.max_turns,
            temperature=float(arguments.temperature),
            top_p=float(arguments.top_p),
            seed=self.seed,
            name="trl-policy",
        )
        self._model = model
        return self._policy

    async def _groups(self, keys: list[str], policy: Any) -> list[tuple[list[Any], list[Any]]]:
        import rolloutgym as rg

        registry = rg.get_registry()
        runs: list[tuple[str, int]] = []  # consecutive equal keys: one GRPO group each
        for key in keys:
            if runs and runs[-1][0] == key:
                runs[-1] = (key, runs[-1][1] + 1)
            else:
                runs.append((key, 1))
        results = []
        for key, count in runs:
            env_id, task_id = split_task_key(key)
            spec = registry.resolve_env(env_id).spec
            group = await rg.arollout_group(
                task_id,
                lambda identifier, _env=spec.id: registry.make_async(_env, task=identifier, **self.env_kwargs),
                policy,
                num_rollouts=count,
                item_id=task_id,
                max_steps=spec.max_steps,
                timeout=spec.timeout,
                concurrency=self.concurrency,
                metadata={"env_id": spec.id},
            )
            self.last_groups.append(group)
            members: list[Any] = [None] * count
            scores: list[Any] = [None] * count
            for index, (trajectory, score) in enumerate(zip(group.trajectories, group.scores, strict=True)):
                member = int(trajectory.metadata.get("member", index))
                members[member], scores[member] = trajectory, score
            results.append((members, scores))
        return results

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one episode per prompt with the trainer's current model; TRL's rollout fields."""
        policy = self._token_policy(trainer)
        keys = [_prompt_task_key(prompt) for prompt in prompts]
        self.last_groups = []
        pad = trainer.processing_class.pad_token_id
        pad = int(pad if pad is not None else trainer.processing_class.eos_token_id)
        output: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "env_mask": [],
            "logprobs": [],
            "env_reward": [],
            "env_passed": [],
            "env_score": [],
        }
        for members, scores in asyncio.run(self._groups(keys, policy)):
            for trajectory, score in zip(members, scores, strict=True):
                if trajectory is None:
                    fields = {"prompt_ids": [pad], "completion_ids": [pad], "env_mask": [0], "logprobs": [0.0]}
                    reward, passed, score_dict = None, None, None
                else:
                    fields = episode_tensors(trajectory, pad_token_id=pad)
                    reward = float(score.value)
                    passed = bool(score.value >= 1.0)
                    score_dict = score.to_dict()
                for name, value in fields.items():
                    output[name].append(value)
                output["env_reward"].append(reward)
                output["env_passed"].append(passed)
                output["env_score"].append(score_dict)
        return output


def env_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
    """The reward function that goes with :class:`RolloutFunction`: the env's own Score value.

    Also logs ``rolloutgym/pass_rate`` (share of episodes scoring 1) through TRL's ``log_metric``.
    """
    rewards = kwargs.get("env_reward")
    if rewards is None:
        raise ConfigError(
            "env_reward reads the rewards that rolloutgym_trl.RolloutFunction returns; pass it as rollout_func"
        )
    passed = [value for value in kwargs.get("env_passed") or [] if value is not None]
    log_metric = kwargs.get("log_metric")
    if callable(log_metric) and passed:
        log_metric("rolloutgym/pass_rate", sum(passed) / len(passed))
    return [None if value is None or not math.isfinite(value) else float(value) for value in rewards]
