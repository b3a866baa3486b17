"""The one door: where an env or a policy reference becomes something that runs.

Every env is built here, whoever asks: ``rolloutgym run`` (the runner resolves once per
run), ``rolloutgym serve`` (its catalog resolves each served env once), Ray workers (once
per worker), ``rg.make``/``rg.make_async``/``rg.load`` and ``Registry.make``/``make_async``/
``load`` (thin doors over :func:`make_env` and :func:`load_env`), and trainers that make one
env per episode (``Registry.make_async(env_id, task=task_id)``: O(1) after the first, since
the registry keeps each env's :class:`~rolloutgym.registry.TaskIndex` and imported factory).

:func:`resolve_env` turns an env reference into a :class:`ResolvedEnv`: its tasks,
identity, budgets and ``build(item)``, which builds a fresh env for a task item and tags it
with its env id and task id (:func:`tag_env`, the one place envs are tagged).
:func:`resolve_policy` builds the policy. The two sources are plain, picklable data
(:class:`EnvSource`, :class:`PolicySource`) so that an executor in other processes (Ray) can
resolve them again there with the same plugins.

Where a reference goes (:func:`is_env_url` is the one "is this a URL" check)::

    "http(s)://HOST/ns/x-v0", "ws(s)://..." -> serve.client (sessions on `rolloutgym serve`)
    "my_env.py|.json|.jsonl"                -> declarative.open_env_file -> the template's compiler
    "path/to/tasks/" (a folder)             -> the same, read by the template whose folder_marker it holds
    "toy/guess-v0"                          -> registry: EnvSpec, TaskIndex, factory(task=item, **kwargs)

A mixture (``run --mix``) is several references, each resolved here (``runner``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError
from rolloutgym_protocol.specs import ENV_URL_SCHEMES, is_env_url

from .registry import Registry, TaskIndex, adapt_env, get_registry, tag_env
from .registry import task_split as _split

__all__ = [
    "EnvSource",
    "PolicySource",
    "ResolvedEnv",
    "ResolvedPolicy",
    "URL_SCHEMES",
    "is_env_file",
    "is_env_url",
    "load",
    "make",
    "make_async",
    "make_env",
    "recorded_reference",
    "resolve_env",
    "resolve_recorded",
    "resolve_policy",
]

# References starting with one of these are remote envs (``rolloutgym serve``), not ids or files.
URL_SCHEMES = ENV_URL_SCHEMES


def is_env_file(reference: str) -> bool:
    """Whether ``reference`` names a declarative env file (or a folder env) rather than a registered id."""
    if is_env_url(reference):
        return False
    return reference.endswith((".py", ".json", ".jsonl")) or Path(reference).is_file() or Path(reference).is_dir()


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
        build: ``build(item) -> Env | AsyncEnv`` (sync; the item may be ``None``), tagged with
            its env id and task id.
        origin: ``"registry"``, ``"file:<path>"`` or the URL (recorded in the run header as ``source``).
        env_source: the reference this was resolved from (executors in other processes resolve it again).
        registry: the registry it was resolved with (executors in other processes mirror its plugins).
        index: the tasks' :class:`~rolloutgym.registry.TaskIndex` (by index, id or item in O(1)).
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
    index: TaskIndex | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = TaskIndex(self.tasks, self.task_ids or None)
        if not self.task_ids:
            self.task_ids = self.index.ids

    @property
    def info_reference(self) -> str:
        """What to pass to ``rolloutgym info`` (or ``run``) for this env: an env file's path, a URL, else the id."""
        if self.origin.startswith("file:"):
            return self.origin[len("file:") :]
        if self.env_source is not None and is_env_url(self.env_source.reference):
            return self.env_source.reference
        return self.env_id

    @property
    def source(self) -> str:
        """The header's ``env.source`` (alias of :attr:`origin`)."""
        return self.origin

    def find_task(self, task: Any) -> tuple[int, Any]:
        """``(index, item)`` of a task given by index, id or item (``None``: the first); O(1)."""
        assert self.index is not None
        return self.index.find(task, self.env_id)

    def make(self, item: Any) -> Any:
        """A fresh env for a task item (one of :attr:`tasks`)."""
        return self.build(item)

    def make_task(self, index: int) -> Any:
        """A fresh env for task number ``index`` (no lookup: the item is ``tasks[index]``)."""
        return self.build(self.tasks[index])

    def make_async(self, index: int) -> Any:
        """Like :meth:`make_task`, adapted to an ``AsyncEnv`` when the env is sync."""
        return adapt_env(self.make_task(index))

    def open(self, task: Any = None, *, asynchronous: bool = False) -> Any:
        """A fresh env for a task given by index, id or item (what ``rg.make(..., task=...)`` returns)."""
        environment = self.build(self.find_task(task)[1])
        return adapt_env(environment) if asynchronous else environment


@dataclass
class ResolvedPolicy:
    """A built policy and the reference it was built from (remote executors rebuild it)."""

    source: PolicySource
    policy: Any


def _tagged(env_id: str, index: TaskIndex, factory: Callable[[Any], Any], what: str) -> Callable[[Any], Any]:
    """``build(item)``: the factory's env for ``item``, tagged with ``env_id`` and the item's task id."""

    def build(item: Any) -> Any:
        return tag_env(factory(item), env_id, index.id_of(item), what=what)

    return build


def resolve_env(source: EnvSource | str, registry: Registry | None = None) -> ResolvedEnv:
    """Resolve an env reference: a registered id, an env file, or a URL of ``rolloutgym serve``.

    Cheap for a registered id (the registry caches the spec lookup, the task index and the
    imported factory); an env file is read and compiled, a URL asks its server, each time.

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
    if is_env_url(source.reference):
        return _resolve_url(source, registry)
    if source.is_file:
        return _resolve_file(source, registry)
    return _resolve_registered(source, registry)


def recorded_reference(env_info: Mapping[str, Any], *, run_path: str | Path | None = None) -> str:
    """The reference a run's env was resolved from, read from its header (``header["env"]``, or
    an entry of ``header["mixture"]``): the env id of a registered env, the env file's path
    (``source: "file:PATH"``), or the URL of a served env. This, not the header's ``id``, is what
    rebuilds the env of a run (training, rescoring, platform jobs): an env file's id
    (``file/<slug>-vN``) is no registered id.

    A relative file path that is not found from here is looked up beside ``run_path`` too.

    Raises:
        ConfigError: the run's env file is not there (the message names it).
    """
    source = str(env_info.get("source") or "registry")
    if source == "registry" or source == "mixture":
        return str(env_info["id"])
    if not source.startswith("file:"):
        return source  # the URL of a served env
    path = Path(source.removeprefix("file:"))
    if path.exists():
        return str(path)
    beside = Path(run_path).parent / path if run_path is not None and not path.is_absolute() else None
    if beside is not None and beside.exists():
        return str(beside)
    raise ConfigError(
        f"the run was made on the env file '{path.name}' ({env_info.get('id')}), which is not at '{path}' from "
        "here; run the command from the folder the run was made in, or put the env file there"
    )


def resolve_recorded(
    env_info: Mapping[str, Any],
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    run_path: str | Path | None = None,
    registry: Registry | None = None,
) -> ResolvedEnv:
    """:func:`resolve_env` of a run's recorded env (:func:`recorded_reference`).

    An env file's env is then known by its id in ``registry`` too (:meth:`Registry.adopt`), so
    code that holds only the run's env id (a trainer, an evaluation) builds the same env.
    """
    registry = registry if registry is not None else get_registry()
    reference = recorded_reference(env_info, run_path=run_path)
    resolved = resolve_env(EnvSource(reference, dict(env_kwargs or {})), registry)
    if resolved.origin.startswith("file:"):
        registry.adopt(resolved)
    return resolved


def make_env(
    source: EnvSource | str, *, task: Any = None, registry: Registry | None = None, asynchronous: bool = False
) -> Any:
    """A fresh env (an ``AsyncEnv`` with ``asynchronous``) for one task of any env reference.

    ``task`` is a task index, id or item (default: the first task). A registered id or a URL
    goes to :meth:`Registry.make` (O(1) per call after the first); an env file is opened here.
    """
    if isinstance(source, str):
        source = EnvSource(source)
    registry = registry if registry is not None else get_registry()
    if not registry.has_env(source.reference) and source.is_file:  # an id needs no look at the disk
        return resolve_env(source, registry).open(task, asynchronous=asynchronous)
    if asynchronous:
        return registry.make_async(source.reference, task=task, **source.kwargs)
    return registry.make(source.reference, task=task, **source.kwargs)


def make(reference: str, *, task: Any = None, **kwargs: Any) -> Any:
    """``rolloutgym.make``: an env from a registered id, an env file or a URL: ``make("toy/guess-v0", task=3)``."""
    return make_env(EnvSource(reference, kwargs), task=task)


def make_async(reference: str, *, task: Any = None, **kwargs: Any) -> Any:
    """``rolloutgym.make_async``: like :func:`make`, as an ``AsyncEnv``."""
    return make_env(EnvSource(reference, kwargs), task=task, asynchronous=True)


def load(reference: str, *, split: str | None = None, **kwargs: Any) -> Any:
    """``rolloutgym.load``: the env's tasks as an ``RLDataset`` (optionally one split) with ``make_env``.

    A registered id, an env file or the URL of an env of ``rolloutgym serve`` (its tasks are the
    server's; ``make_env`` gives a session that opens when awaited, as a run's members do).
    """
    registry = get_registry()
    if is_env_file(reference) or is_env_url(reference):
        from .datasets import RLDataset

        resolved = resolve_env(EnvSource(reference, kwargs), registry)
        items = [item for item in resolved.tasks if split is None or _split(item) == split]
        if not items:
            raise ConfigError(f"environment '{resolved.env_id}' has no tasks in split '{split}'")
        return RLDataset(
            items,
            metadata={"env_id": resolved.env_id, "split": split},
            make_env=resolved.make,
            get_item_id=lambda item: resolved.index.id_of(item) or str(item),  # type: ignore[union-attr]
        )
    return registry.load(reference, split=split, **kwargs)


def _resolve_url(source: EnvSource, registry: Registry) -> ResolvedEnv:
    """A ``ResolvedEnv`` whose tasks are the server's and whose envs are sessions on it (WebSocket).

    ``build(item)`` does no I/O: it returns a :class:`~rolloutgym.serve.client_async.PendingRemoteEnv`,
    which the rollout engine awaits, opening the session without blocking the event loop; it
    is tagged (:func:`tag_env`) once open.
    """
    from .serve.client_async import PendingRemoteEnv
    from .serve.client_requests import env_info, env_tasks, parse_env_url

    url = source.reference
    parse_env_url(url)  # a clear error for a URL without an env id
    info = env_info(url)
    listing = env_tasks(url)
    kwargs = dict(source.kwargs) or None
    items = [entry.get("item", {"id": entry["id"], "split": entry.get("split")}) for entry in listing]
    index = TaskIndex(items, [entry["id"] for entry in listing])
    env_url = url.rstrip("/")

    what = f"remote env {env_url}"

    def session(item: Any) -> PendingRemoteEnv:
        position = index.by_identity.get(id(item))
        # an item from elsewhere: the server finds it by its id
        task = index.id_of(item) if position is None else (position if index.has_tasks else None)
        identifier = index.id_of(item)
        return PendingRemoteEnv(
            env_url, task=task, kwargs=kwargs, opened=lambda env: tag_env(env, info["id"], identifier, what=what)
        )

    return ResolvedEnv(
        env_id=info["id"],
        version=info.get("version"),
        tasks=index.items,
        build=session,
        origin=env_url,
        plugin=info.get("plugin"),
        plugin_version=info.get("plugin_version"),
        replayable=bool(info.get("replayable")),
        max_steps=info.get("max_steps"),
        timeout=info.get("timeout"),
        env_source=source,
        registry=registry,
        task_ids=index.ids,
        index=index,
    )


def _resolve_registered(source: EnvSource, registry: Registry) -> ResolvedEnv:
    adopted = registry.adopted(source.reference)  # an env file's env, known by its id (resolve_recorded)
    if adopted is not None:
        return adopted  # type: ignore[no-any-return]
    registered = registry.resolve_env(source.reference)
    spec = registered.spec
    index = registry.task_index(spec.id)
    return ResolvedEnv(
        env_id=spec.id,
        version=spec.version,
        tasks=index.items,
        build=registry.env_builder(spec.id, source.kwargs),
        origin="registry",
        plugin=registered.plugin.distribution,
        plugin_version=registered.plugin.version,
        replayable=spec.replayable,
        max_steps=spec.max_steps,
        timeout=spec.timeout,
        env_source=source,
        registry=registry,
        task_ids=index.ids,
        index=index,
    )


def _resolve_file(source: EnvSource, registry: Registry) -> ResolvedEnv:
    from .declarative import open_env_file

    env_file = open_env_file(source.reference, registry=registry, **source.kwargs)
    index = TaskIndex(list(env_file.tasks))
    return ResolvedEnv(
        env_id=env_file.env_id,
        version=env_file.version,
        tasks=index.items,
        build=_tagged(env_file.env_id, index, env_file.make, f"env file {env_file.path}"),
        origin=env_file.source,
        replayable=False,
        env_source=source,
        registry=registry,
        task_ids=index.ids,
        index=index,
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
