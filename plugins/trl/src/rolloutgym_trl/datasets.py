"""Training datasets for ``GRPOTrainer`` from registered envs: one row per task.

Each row has ``prompt`` (the env's first observation as chat messages), ``env_id`` and
``task_id``. The prompt's last message also carries the task's key
(``"rolloutgym_task": "ENV_ID#TASK_ID"``): ``GRPOTrainer`` hands a ``rollout_func`` only the
prompts, and the key is how :class:`~rolloutgym_trl.RolloutFunction` finds the task (two
tasks may share a prompt and differ in hidden state). Chat templates ignore the extra key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["TASK_KEY", "initial_messages", "split_task_key", "task_key", "task_rows", "train_dataset"]

TASK_KEY = "rolloutgym_task"


def task_key(env_id: str, task_id: str) -> str:
    """``"ENV_ID#TASK_ID"``: what a prompt carries to name its task."""
    return f"{env_id}#{task_id}"


def split_task_key(key: str) -> tuple[str, str]:
    """``(env_id, task_id)`` from a key made by :func:`task_key`."""
    env_id, separator, task_id = key.partition("#")
    if not separator or not env_id or not task_id:
        raise ConfigError(f"malformed task key {key!r}; expected 'ENV_ID#TASK_ID'")
    return env_id, task_id


def initial_messages(environment: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(messages, tools)``: an env's first observation as chat messages, and its tools.

    The env is reset (seed 0) and left open; the caller closes it.
    """
    from rolloutgym.llm import env_tools, observation_messages

    observation, _info = environment.reset(seed=0)
    messages = [dict(message) for message in observation_messages(observation)]
    return messages, list(env_tools(environment) or [])


def _close(environment: Any) -> None:
    close = getattr(environment, "close", None)
    if callable(close):
        close()


def _plain(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    from rolloutgym.llm import content_text

    return [{"role": str(message["role"]), "content": content_text(message.get("content"))} for message in messages]


def task_rows(
    env_ids: str | Sequence[str], *, split: str | None = None, env_kwargs: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The rows of :func:`train_dataset` as plain dicts (no ``datasets`` import)."""
    import rolloutgym as rg

    registry = rg.get_registry()
    rows: list[dict[str, Any]] = []
    for env_id in [env_ids] if isinstance(env_ids, str) else list(env_ids):
        spec = registry.resolve_env(env_id).spec
        dataset = registry.load(spec.id, split=split)
        for index in range(len(dataset)):
            identifier = dataset.item_id(index)
            environment = rg.as_sync(registry.make(spec.id, task=identifier, **dict(env_kwargs or {})))
            try:
                messages, _tools = initial_messages(environment)
            finally:
                _close(environment)
            prompt = _plain(messages)
            if not prompt:
                prompt = [{"role": "user", "content": ""}]
            prompt[-1][TASK_KEY] = task_key(spec.id, identifier)
            rows.append({"prompt": prompt, "env_id": spec.id, "task_id": identifier})
    if not rows:
        raise ConfigError(f"no tasks to train on in {env_ids!r} (split {split!r})")
    return rows


def train_dataset(
    env_ids: str | Sequence[str], *, split: str | None = "train", env_kwargs: Mapping[str, Any] | None = None
) -> Any:
    """A ``datasets.Dataset`` of the tasks of ``env_ids`` (one env id or several, for a mixture).

    Args:
        env_ids: registered env ids.
        split: the task split (``None``: every task).
        env_kwargs: keyword arguments for the env factories.
    """
    from datasets import Dataset

    return Dataset.from_list(task_rows(env_ids, split=split, env_kwargs=env_kwargs))
