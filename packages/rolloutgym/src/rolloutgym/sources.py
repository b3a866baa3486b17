"""Where a run's env and policy come from: the one place that resolves them.

A run names its env (a registered id such as ``toy/guess-v0`` or an env file path) and its
policy (``"provider[:model]"``). :func:`resolve_env` turns the env reference into a
:class:`ResolvedEnv` exactly once per run: its tasks, identity, budgets and a factory that
builds a fresh env for task number ``i`` without going back through the registry.
:func:`resolve_policy` builds the policy. The runner calls both, then hands the results to
an executor, which only executes what it is handed.

The two sources are plain, picklable data (:class:`EnvSource`, :class:`PolicySource`) so that
an executor in other processes (Ray) can resolve them again there with the same plugins.

Where a reference goes::

    EnvSource("toy/guess-v0")      -> registry: EnvSpec -> factory(task=item, **kwargs)
    EnvSource("my_env.py|.json")   -> declarative env file -> template compiler -> factory(task)
    EnvSource("http://host/sql/x") -> the URL scheme branch in resolve_env (remote envs)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol import as_async

from .registry import Registry, get_registry, task_id

__all__ = [
    "EnvSource",
    "PolicySource",
    "ResolvedEnv",
    "ResolvedPolicy",
    "URL_SCHEMES",
    "is_env_file",
    "resolve_env",
    "resolve_policy",
]

# References starting with one of these are remote envs (``rolloutgym serve``), not ids or files.
URL_SCHEMES = ("http://", "https://")


def is_env_file(reference: str) -> bool:
    """Whether ``reference`` names a declarative env file rather than a registered id."""
    return reference.endswith((".py", ".json", ".jsonl")) or Path(reference).is_file()


@dataclass
class EnvSource:
    """A registered env id, an env file path (or a remote env URL), plus factory keyword arguments."""

    reference: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        return is_env_file(self.reference)

    def resolve(self, registry: Registry | None = None) -> ResolvedEnv:
        """Shorthand for :func:`resolve_env`."""
        return resolve_env(self, registry)


@dataclass
class PolicySource:
    """A policy reference (``"provider[:model]"``) and its options."""

    reference: str
    options: dict[str, Any] = field(default_factory=dict)

    def build(self, registry: Registry | None = None) -> Any:
        """Shorthand for ``resolve_policy(self, registry).policy``."""
        return resolve_policy(self, registry).policy


@dataclass
class ResolvedEnv:
    """What a run knows about its environment: identity, tasks, budgets and a factory.

    Attributes:
        env_id: the env's id (``file/<slug>-v<version>`` for env files).
        tasks: the task items; ``[None]`` for an env without tasks.
        build: ``build(item) -> Env | AsyncEnv`` (sync; the item may be ``None``).
        origin: ``"registry"`` or ``"file:<path>"`` (recorded in the run header as ``source``).
        env_source: the reference this was resolved from (executors in other processes resolve it again).
        registry: the registry it was resolved with (executors in other processes mirror its plugins).
    """

    env_id: str
    version: int | None
    tasks: list[Any]
    build: Callable[[Any], Any]
    origin: str = "registry"
    plugin: str | None = None
    plugin_version: str | None = None
    replayable: bool = False
    max_steps: int | None = None
    timeout: float | None = None
    env_source: EnvSource | None = None
    registry: Registry | None = None
    task_ids: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.task_ids:
            self.task_ids = [
                task_id(item, index) if item is not None else str(index) for index, item in enumerate(self.tasks)
            ]

    @property
    def info_reference(self) -> str:
        """What to pass to ``rolloutgym info`` (or ``run``) for this env: an env file's path, a URL, else the id."""
        if self.origin.startswith("file:"):
            return self.origin[len("file:") :]
        if self.env_source is not None and self.env_source.reference.startswith(URL_SCHEMES):
            return self.env_source.reference
        return self.env_id

    @property
    def source(self) -> str:
        """The header's ``env.source`` (alias of :attr:`origin`)."""
        return self.origin

    def make(self, item: Any) -> Any:
        """A fresh env for a task item (one of :attr:`tasks`)."""
        return self.build(item)

    def make_task(self, index: int) -> Any:
        """A fresh env for task number ``index`` (no lookup: the item is ``tasks[index]``)."""
        return self.build(self.tasks[index])

    def make_async(self, index: int) -> Any:
        """Like :meth:`make_task`, adapted to an ``AsyncEnv`` when the env is sync."""
        return as_async(self.make_task(index))


@dataclass
class ResolvedPolicy:
    """A built policy and the reference it was built from (remote executors rebuild it)."""

    source: PolicySource
    policy: Any


def resolve_env(source: EnvSource | str, registry: Registry | None = None) -> ResolvedEnv:
    """Resolve an env reference once: a registered id, an env file, or (later) a URL.

    Args:
        source: the reference and its factory keyword arguments.
        registry: where registered ids and templates are looked up (default: the process-wide one).
            It is the only registry used; nothing falls back to the global one.

    Raises:
        EnvNotFound: no such registered id (the message lists what exists).
        EnvFileError: a malformed env file.
    """
    if isinstance(source, str):
        source = EnvSource(source)
    registry = registry if registry is not None else get_registry()
    reference = source.reference
    if reference.startswith(URL_SCHEMES):
        # The one place where a remote env URL (``rolloutgym serve``) is resolved.
        return _resolve_url(source, registry)
    if source.is_file:
        return _resolve_file(source, registry)
    return _resolve_registered(source, registry)


def _resolve_url(source: EnvSource, registry: Registry) -> ResolvedEnv:
    from .serve import resolve_env_url  # the client of `rolloutgym serve`

    return resolve_env_url(source, registry)


def _resolve_registered(source: EnvSource, registry: Registry) -> ResolvedEnv:
    registered = registry.resolve_env(source.reference)
    spec = registered.spec
    items = registry.tasks(spec.id)
    factory = registry.env_factory(spec.id)
    arguments = {**spec.kwargs, **source.kwargs}
    has_tasks = spec.tasks is not None
    if not has_tasks:
        items = [None]
    ids = [task_id(item, index) if item is not None else str(index) for index, item in enumerate(items)]
    by_item = {id(item): identifier for item, identifier in zip(items, ids, strict=True)}

    def build(item: Any) -> Any:
        if has_tasks:
            identifier = by_item.get(id(item))
            if identifier is None:  # an item from elsewhere: the registry finds (or tolerates) it
                return registry.make(spec.id, task=item, **source.kwargs)
            environment = factory(**arguments, task=item)
        else:
            identifier = None
            environment = factory(**arguments)
        return registry.tag_env(environment, spec, identifier)

    return ResolvedEnv(
        env_id=spec.id,
        version=spec.version,
        tasks=items,
        build=build,
        origin="registry",
        plugin=registered.plugin.distribution,
        plugin_version=registered.plugin.version,
        replayable=spec.replayable,
        max_steps=spec.max_steps,
        timeout=spec.timeout,
        env_source=source,
        registry=registry,
        task_ids=ids,
    )


def _resolve_file(source: EnvSource, registry: Registry) -> ResolvedEnv:
    from .declarative import open_env_file

    env_file = open_env_file(source.reference, registry=registry, **source.kwargs)
    return ResolvedEnv(
        env_id=env_file.env_id,
        version=env_file.version,
        tasks=list(env_file.tasks),
        build=env_file.make,
        origin=env_file.source,
        replayable=False,
        env_source=source,
        registry=registry,
    )


def resolve_policy(
    source: PolicySource | str, registry: Registry | None = None, *, policy: Any = None
) -> ResolvedPolicy:
    """Build the policy of a run (or wrap the already-built ``policy`` object with its reference).

    Raises:
        PolicyNotFound: no such provider (the message says which plugin provides it).
        ConfigError: the provider needs a model (``provider:MODEL``).
    """
    if isinstance(source, str):
        source = PolicySource(source)
    if policy is None:
        registry = registry if registry is not None else get_registry()
        policy = registry.make_policy(source.reference, **source.options)
        if inspect.isawaitable(policy):
            raise TypeError(f"policy provider of '{source.reference}' returned an awaitable; factories must be sync")
    return ResolvedPolicy(source, policy)
