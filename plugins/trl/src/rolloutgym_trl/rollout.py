"""A ``rollout_func`` for TRL's ``GRPOTrainer`` that plays episodes with rolloutgym's LLM loop.

``GRPOTrainer(rollout_func=RolloutFunction(), reward_funcs=[env_reward], ...)`` trains on
any registered env (text actions, tool calls, many turns, several envs mixed in one
dataset): for each prompt the function finds the task (the prompt's ``rolloutgym_task``
key, see :mod:`rolloutgym_trl.datasets`), runs a group of episodes with
:func:`rolloutgym.arollout_group` and a :class:`rolloutgym.llm.TokenPolicy` that samples from
the model being trained, and hands TRL exactly the recorded tokens
(:mod:`rolloutgym_trl.rollout_fields`):

* ``prompt_ids``: the first prompt (the env's first observation, rendered);
* ``completion_ids``: every later token in order, sampled turns and the env's replies;
* ``env_mask``: 1 on sampled tokens, 0 on env tokens (TRL leaves those out of the loss);
* ``logprobs``: the sampler's logprob per sampled token (0.0 on env tokens);
* ``env_reward`` / ``env_passed`` / ``env_score``: the env's Score, read by :func:`env_reward`.

A member whose episode failed (a :class:`rolloutgym.RolloutError`) gets one masked
token and reward ``None``: TRL leaves it out of the group baseline and gives it no advantage.

**Batched.** By default a step's episodes are played together through
:func:`rolloutgym.llm.arun_multi_turn_rollout`: every turn of every still-running episode
is sampled in one call of a :class:`rolloutgym.llm.BatchSampler` (one padded forward pass
per decoded token with :class:`rolloutgym_transformers.TransformersBatchSampler` on the
trained model; ``benchmarks/batch_rollout.py``-style figures for the rollout part are in
``benchmarks/README.md`` under ``grpo_rollout``). With ``use_vllm=True`` in the
``GRPOConfig`` the waves go to TRL's own vLLM backend instead
(:class:`rolloutgym_trl.vllm.TRLVLLMBatchSampler`: the server's ``/v1/completions`` in
server mode, the colocated ``LLM`` in colocate mode). ``batched=False`` plays episodes
one at a time, as before.

**Signal, not noise** (``dynamic_sampling``). A GRPO group whose episodes all got the same
reward has advantage 0 everywhere: it costs a step's compute and teaches nothing. With
``"resample"`` (the default) such groups are replaced, up to ``max_resample_rounds``
times, by groups of other tasks of the training set, chosen from running pass rates
(tasks whose recent episodes got different rewards first, e.g. solved sometimes and failed
sometimes, then tasks not seen yet; tasks with one reward in all their recent episodes are
skipped). The
groups still flat after that are dropped from the loss (``env_mask`` 0, so they do not
dilute the token-normalised loss either). ``"drop"`` only drops; ``"off"`` keeps every
group. Each call's counts and signal figures (share of groups with reward spread,
within-group reward std, mean advantage magnitude) reach the training log through
:func:`env_reward` as ``rolloutgym/...`` metrics.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol.attribution import party_of
from rolloutgym_protocol.errors import ConfigError

from ._attribution import checked_parties
from .datasets import TASK_KEY, split_task_key
from .rollout_fields import STATS_KEY, _fields
from .stats import group_signal, has_spread

__all__ = ["DYNAMIC_SAMPLING", "RolloutFunction"]

DYNAMIC_SAMPLING = ("resample", "drop", "off")
_RECENT = 16  # episodes per task behind its running pass rate


def _prompt_task_key(prompt: Any) -> str:
    if isinstance(prompt, Sequence) and not isinstance(prompt, str):
        for message in reversed(list(prompt)):
            if isinstance(message, Mapping) and isinstance(message.get(TASK_KEY), str):
                return str(message[TASK_KEY])
    raise ConfigError(
        "a prompt given to the rolloutgym rollout_func does not name its task; build the train_dataset with "
        "rolloutgym_trl.train_dataset(ENV_ID) (its prompts carry a 'rolloutgym_task' key)"
    )


@dataclass
class _Group:
    """One GRPO group of a call: its task key, members (``None``: failed) and their scores."""

    key: str
    members: list[Any]
    scores: list[Any]
    dropped: bool = False
    masked: set[int] = field(default_factory=set)  # members left out for their score's attribution

    @property
    def rewards(self) -> list[float | None]:
        return [
            None if score is None or index in self.masked else float(score.value)
            for index, score in enumerate(self.scores)
        ]


def episode_figures(groups: Sequence[_Group]) -> dict[str, float]:
    """The call's episodes in figures trackers plot: the mean of each Score component
    (``rolloutgym/reward/NAME``) and the share of each stop reason (``rolloutgym/stop/REASON``)."""
    components: dict[str, list[float]] = {}
    stops: Counter[str] = Counter()
    episodes = 0
    for group in groups:
        for trajectory, score in zip(group.members, group.scores, strict=True):
            if trajectory is None or score is None:
                continue
            episodes += 1
            stops[str(trajectory.stop_reason)] += 1
            for name, child in score.components.items():
                components.setdefault(name, []).append(float(child.value))
    figures = {f"rolloutgym/reward/{name}": sum(values) / len(values) for name, values in components.items()}
    figures.update({f"rolloutgym/stop/{reason}": count / episodes for reason, count in stops.items()})
    return figures


def _runs(keys: Sequence[str]) -> list[tuple[str, int]]:
    """Consecutive equal keys (TRL repeats each prompt ``num_generations`` times): one group each."""
    runs: list[tuple[str, int]] = []
    for key in keys:
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1] + 1)
        else:
            runs.append((key, 1))
    return runs


def _make_env(registry: Any, env_id: str, env_kwargs: Mapping[str, Any], task: Any) -> Any:
    return registry.make_async(env_id, task=task, **env_kwargs)


class RolloutFunction:
    """``rollout_func`` for ``GRPOTrainer``: episodes of registered envs, token-exact.

    Args:
        max_tokens: tokens sampled per assistant turn (default: the trainer's
            ``max_completion_length``).
        max_turns: assistant turns per episode (default: the env's step budget).
        max_seq_len: tokens per episode, prompt included (default: the model's context).
        env_kwargs: keyword arguments for every env factory.
        concurrency: episodes of one group run at once when ``batched=False``.
        seed: base sampling seed; each call, episode and turn gets its own seed from it.
        chat_template: a Jinja chat template replacing the tokenizer's.
        batched: play a call's episodes together, one batched model call per turn wave
            (the default); ``False``: one episode at a time.
        dynamic_sampling: ``"resample"``, ``"drop"`` or ``"off"`` (module docstring).
        max_resample_rounds: how many times flat groups are replaced per call.
        tasks: the task keys (``ENV_ID#TASK_ID``) replacements are drawn from (default:
            the trainer's ``train_dataset``).
        mask_attributed: the parties (``rolloutgym_protocol.attribution``) whose episodes are
            left out of training: their reward ``None`` (out of the group baseline, no
            advantage) and their tokens masked. Default ``user``, ``env`` and ``grader``: a score
            the evidence puts on the simulated user, the env or the grader says nothing about
            the policy. ``()`` trains on every episode.

    Attributes:
        last_groups: the groups of the latest call (task key, members, scores).
        last_stats: the latest call's signal figures (also logged through :func:`env_reward`).
        reward_history: task key -> the rewards of its recent episodes (the running pass rates).
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
        batched: bool = True,
        dynamic_sampling: str = "resample",
        max_resample_rounds: int = 2,
        tasks: Sequence[str] | None = None,
        mask_attributed: Sequence[str] = ("user", "env", "grader"),
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        if dynamic_sampling not in DYNAMIC_SAMPLING:
            raise ConfigError(f"dynamic_sampling={dynamic_sampling!r}: use one of {', '.join(DYNAMIC_SAMPLING)}")
        if max_resample_rounds < 0:
            raise ConfigError(f"max_resample_rounds must be 0 or more, got {max_resample_rounds}")
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.max_seq_len = max_seq_len
        self.env_kwargs = dict(env_kwargs or {})
        self.concurrency = concurrency
        self.seed = seed
        self.chat_template = chat_template
        self.batched = batched
        self.dynamic_sampling = dynamic_sampling
        self.max_resample_rounds = max_resample_rounds
        self.mask_attributed = checked_parties(mask_attributed)
        self._attributed: Counter[str] = Counter()
        self.last_groups: list[_Group] = []
        self.last_stats: dict[str, float] = {}
        self.reward_history: dict[str, deque[float]] = {}
        self._pool: list[str] | None = list(tasks) if tasks else None
        self._policy: Any = None
        self._sampler: Any = None
        self._model: Any = None
        self._context = 4096
        self._calls = 0

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
        self._sampler = self._batch_sampler(trainer, self._policy)
        context = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        self._context = self.max_seq_len or (int(context) if isinstance(context, int) else 4096)
        self._model = model
        return self._policy

    @staticmethod
    def _batch_sampler(trainer: Any, policy: Any) -> Any:
        """TRL's vLLM backend when the trainer generates with vLLM, else the trained model's batch sampler."""
        if getattr(trainer, "use_vllm", False):
            from .vllm import TRLVLLMBatchSampler

            return TRLVLLMBatchSampler.from_trainer(trainer, policy.renderer)
        return policy.sampler.batch_sampler(policy.renderer)

    async def _one_at_a_time(self, runs: list[tuple[str, int]], policy: Any) -> list[_Group]:
        import rolloutgym as rg

        registry = rg.get_registry()
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
            members: list[Any] = [None] * count
            scores: list[Any] = [None] * count
            for index, (trajectory, score) in enumerate(zip(group.trajectories, group.scores, strict=True)):
                member = int(trajectory.metadata.get("member", index))
                members[member], scores[member] = trajectory, score
            results.append(_Group(key, members, scores))
        return results

    async def _together(self, runs: list[tuple[str, int]], policy: Any) -> list[_Group]:
        """Every episode of ``runs`` in one :func:`~rolloutgym.llm.arun_multi_turn_rollout` call."""
        import functools

        import rolloutgym as rg
        from rolloutgym.llm import arun_multi_turn_rollout

        registry = rg.get_registry()
        samples: list[dict[str, Any]] = []
        task_to_env: dict[str, Any] = {}
        budgets: list[int] = []
        for key, count in runs:
            env_id, task_id = split_task_key(key)
            spec = registry.resolve_env(env_id).spec
            if spec.id not in task_to_env:
                task_to_env[spec.id] = functools.partial(_make_env, registry, spec.id, self.env_kwargs)
                budgets.append(int(spec.max_steps or 1))
            samples.extend({"task_name": spec.id, "task": task_id} for _ in range(count))
        seed = None if self.seed is None else self.seed + 1_000_003 * self._calls
        self._calls += 1
        batch, _metrics = await arun_multi_turn_rollout(
            self._sampler,
            samples,
            task_to_env,
            max_seq_len=self._context,
            max_rollout_turns=self.max_turns or max(budgets),
            max_tokens=policy.max_tokens,
            temperature=policy.temperature,
            top_p=policy.top_p,
            stop=policy.stop,
            seed=seed,
        )
        groups, start = [], 0
        for key, count in runs:
            members = list(batch.trajectories[start : start + count])
            scores = [None if trajectory is None else trajectory.score for trajectory in members]
            groups.append(_Group(key, members, scores))
            start += count
        return groups

    def _play(self, runs: list[tuple[str, int]], policy: Any) -> list[_Group]:
        play = self._together if self.batched else self._one_at_a_time
        groups = asyncio.run(play(runs, policy))
        for group in groups:
            for index, score in enumerate(group.scores):
                party = "agent" if score is None else party_of(score)
                if party != "agent":
                    self._attributed[party] += 1
                if party in self.mask_attributed:
                    group.masked.add(index)
            history = self.reward_history.setdefault(group.key, deque(maxlen=_RECENT))
            history.extend(reward for reward in group.rewards if reward is not None)
        return groups

    def _task_pool(self, trainer: Any) -> list[str]:
        if self._pool is None:
            dataset = getattr(trainer, "train_dataset", None)
            keys = []
            for row in dataset if dataset is not None else []:
                try:
                    keys.append(_prompt_task_key(row["prompt"]))
                except (ConfigError, KeyError, TypeError):
                    continue
            self._pool = sorted(set(keys))
        return self._pool

    def _replacements(self, pool: Sequence[str], exclude: set[str], count: int) -> list[str]:
        """Up to ``count`` task keys for flat groups: mixed recent results first, then unseen tasks."""
        rng = random.Random(self._calls if self.seed is None else self.seed * 7_919 + self._calls)
        mixed, unseen = [], []
        for key in pool:
            if key in exclude:
                continue
            history = self.reward_history.get(key)
            if not history:
                unseen.append(key)
            elif has_spread(list(history)):
                mixed.append(key)
        rng.shuffle(mixed)
        rng.shuffle(unseen)
        return (mixed + unseen)[:count]

    def _resample(self, groups: list[_Group], policy: Any, trainer: Any) -> int:
        """Replace flat groups by groups of other tasks; returns how many were replaced."""
        replaced = 0
        for _round in range(self.max_resample_rounds):
            flat = [index for index, group in enumerate(groups) if not has_spread(group.rewards)]
            if not flat:
                break
            keys = self._replacements(self._task_pool(trainer), {group.key for group in groups}, len(flat))
            if not keys:
                break
            fresh = self._play(
                [(key, len(groups[index].members)) for key, index in zip(keys, flat, strict=False)], policy
            )
            for index, group in zip(flat, fresh, strict=False):
                if has_spread(group.rewards):
                    groups[index] = group
                    replaced += 1
        return replaced

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one episode per prompt with the trainer's current model; TRL's rollout fields."""
        started = time.perf_counter()
        self._attributed.clear()
        policy = self._token_policy(trainer)
        groups = self._play(_runs([_prompt_task_key(prompt) for prompt in prompts]), policy)
        first = group_signal([group.rewards for group in groups])
        replaced = self._resample(groups, policy, trainer) if self.dynamic_sampling == "resample" else 0
        signal = group_signal([group.rewards for group in groups])
        if self.dynamic_sampling != "off":
            for group in groups:
                group.dropped = not has_spread(group.rewards)
        self.last_groups = groups
        self.last_stats = {
            "rolloutgym/groups_with_spread": signal.spread_fraction,
            "rolloutgym/groups_with_spread_first_draw": first.spread_fraction,
            "rolloutgym/resampled_groups": float(replaced),
            "rolloutgym/dropped_groups": float(sum(group.dropped for group in groups)),
            "rolloutgym/group_reward_std": signal.reward_std,
            "rolloutgym/advantage_abs": signal.advantage_abs,
            "rolloutgym/rollout_seconds": time.perf_counter() - started,
            "rolloutgym/masked_attributed": float(sum(len(group.masked) for group in groups)),
            **{f"rolloutgym/attribution/{party}": float(count) for party, count in self._attributed.items()},
            **episode_figures(groups),
        }
        pad = trainer.processing_class.pad_token_id
        pad = int(pad if pad is not None else trainer.processing_class.eos_token_id)
        output = _fields(groups, pad)
        output[STATS_KEY] = dict(self.last_stats)  # not a list: TRL hands it to every reward call as is
        return output
