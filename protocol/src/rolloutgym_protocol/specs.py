"""Spec objects that plugin hooks return. They are cheap: they import nothing heavy.

Entry points are ``"module:attribute"`` strings, imported only when used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import SpecError

__all__ = [
    "ENV_ID_PATTERN",
    "ENV_URL_SCHEMES",
    "BenchmarkSpec",
    "EnvSpec",
    "ExporterSpec",
    "GraderSpec",
    "PolicySpec",
    "SandboxProviderSpec",
    "TemplateSpec",
    "is_env_url",
    "parse_env_id",
]

ENV_ID_PATTERN = re.compile(
    r"^(?P<namespace>[a-z0-9][a-z0-9_.-]*)/(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*?)(?:-v(?P<version>\d+))?$"
)
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


# An env reference starting with one of these is a served env (``rolloutgym serve``), not an id or a file.
ENV_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")


def is_env_url(reference: object) -> bool:
    """Whether an env reference names a served env (``http(s)://`` or ``ws(s)://``): the one such check."""
    return isinstance(reference, str) and reference.startswith(ENV_URL_SCHEMES)


def parse_env_id(env_id: str) -> tuple[str, str, int | None]:
    """Split ``"namespace/name-vN"`` into ``(namespace, name, N)``; N is None when absent."""
    match = ENV_ID_PATTERN.match(env_id)
    if match is None:
        raise SpecError(f"malformed environment id {env_id!r}; ids look like 'namespace/name-v0' (e.g. 'toy/guess-v0')")
    version = match.group("version")
    return match.group("namespace"), match.group("name"), None if version is None else int(version)


def _check_entry_point(kind: str, name: str, value: str | None, *, required: bool = True) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or not _ENTRY_POINT.match(value):
        raise SpecError(f"{kind} {name!r}: entry point {value!r} must look like 'package.module:attribute'")


@dataclass(frozen=True)
class EnvSpec:
    """A registered environment.

    Attributes:
        id: ``namespace/name-vN``; the namespace belongs to the registering plugin.
        entry_point: ``"module:factory"``; ``factory(task=item, **kwargs)`` returns an
            ``Env`` or ``AsyncEnv`` (``task`` is omitted when the env has no tasks).
        tasks: ``"module:loader"``; ``loader()`` returns the env's task items. Each item
            has an ``id`` and a ``split`` (attributes or mapping keys).
        description: one paragraph for ``rolloutgym info``.
        tags: free-form labels (``"multi-turn"``, ``"tools"``, ``"sql"``).
        splits: the split names the tasks use (``("train", "dev", "test")``).
        max_steps: default step budget per rollout (None: no limit).
        timeout: default wall-clock budget per rollout in seconds.
        kwargs: default keyword arguments for the factory.
        replayable: replaying a trajectory's actions on a fresh env for the same task
            reproduces its outcome, so ``rolloutgym rescore`` can re-grade it.
        forkable: the env can ``snapshot()``/``restore()``/``fork()`` mid-episode
            (``rolloutgym_protocol.ForkableEnv``); branching rollouts need it.
        fork_note: why the env cannot fork (or how it forks, when that is worth saying).
    """

    id: str
    entry_point: str
    tasks: str | None = None
    description: str = ""
    tags: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    max_steps: int | None = None
    timeout: float | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    replayable: bool = False
    forkable: bool = False
    fork_note: str = ""

    def __post_init__(self) -> None:
        parse_env_id(self.id)
        if parse_env_id(self.id)[2] is None:
            raise SpecError(f"environment id {self.id!r} needs a version suffix, e.g. '{self.id}-v0'")
        _check_entry_point("environment", self.id, self.entry_point)
        _check_entry_point("environment", self.id, self.tasks, required=False)
        object.__setattr__(self, "tags", tuple(self.tags))
        object.__setattr__(self, "splits", tuple(self.splits))

    @property
    def namespace(self) -> str:
        return parse_env_id(self.id)[0]

    @property
    def name(self) -> str:
        return parse_env_id(self.id)[1]

    @property
    def version(self) -> int:
        version = parse_env_id(self.id)[2]
        assert version is not None
        return version


@dataclass(frozen=True)
class PolicySpec:
    """A policy provider, used as ``--policy NAME[:MODEL]``.

    ``entry_point`` names ``factory(model: str | None, **options) -> policy``.
    """

    name: str
    entry_point: str
    description: str = ""
    requires_model: bool = False
    example: str | None = None

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9_-]*$", self.name or ""):
            raise SpecError(f"policy provider name {self.name!r} must be lowercase letters, digits, '-' or '_'")
        _check_entry_point("policy", self.name, self.entry_point)


@dataclass(frozen=True)
class TemplateSpec:
    """A declarative template compiler (``sql``, ``workflow``, ...).

    ``entry_point`` names ``compile(environment) -> factory`` where
    ``factory(task, **kwargs)`` builds an env for one :class:`~rolloutgym.Task`.

    ``validator`` (optional) names ``validate(config, prefix) -> dict``: it checks the
    template's ``config`` when an ``Environment`` is built and when an env file is loaded,
    raising ``EnvFileError`` with one ``path: message`` line per problem (paths start at
    ``prefix``, e.g. ``config.tools[2].name``), and returns the config. The template's
    plugin owns its config shape; without a validator the config is checked at compile time.

    ``folder_marker`` and ``folder_loader`` (optional, together) make a folder an env of this
    template: ``rolloutgym run DIR`` where ``DIR`` or one of its subfolders holds a file named
    ``folder_marker`` (``task.toml``) calls ``load(path) -> Environment`` named by ``folder_loader``.
    """

    name: str
    entry_point: str
    description: str = ""
    validator: str | None = None
    folder_marker: str | None = None
    folder_loader: str | None = None

    def __post_init__(self) -> None:
        _check_entry_point("template", self.name, self.entry_point)
        _check_entry_point("template", self.name, self.validator or None, required=False)
        _check_entry_point("template", self.name, self.folder_loader or None, required=False)
        if (self.folder_marker is None) != (self.folder_loader is None):
            raise SpecError(f"template {self.name!r}: give folder_marker and folder_loader together")


@dataclass(frozen=True)
class GraderSpec:
    """A named criterion grader / verifier primitive.

    ``entry_point`` names ``build(**params) -> grader`` used by verifier configs as
    ``{"type": NAME, ...params}``.
    """

    name: str
    entry_point: str
    description: str = ""

    def __post_init__(self) -> None:
        _check_entry_point("grader", self.name, self.entry_point)


@dataclass(frozen=True)
class ExporterSpec:
    """A training-data export format for ``rolloutgym export RUN --format NAME``.

    ``entry_point`` names ``export(run, out_path, **options) -> Path``.
    """

    name: str
    entry_point: str
    description: str = ""
    extension: str = ".jsonl"

    def __post_init__(self) -> None:
        _check_entry_point("exporter", self.name, self.entry_point)


@dataclass(frozen=True)
class BenchmarkSpec:
    """A ready-made benchmark for ``rolloutgym.evals`` (``make_benchmark(NAME)``, ``run_benchmark(NAME, ...)``).

    ``entry_point`` names ``factory(examples=None, **options) -> rolloutgym.evals.Benchmark``.
    ``env_id`` (optional) is the registered environment that runs the same problems
    (``rolloutgym run ENV_ID``).
    """

    name: str
    entry_point: str
    description: str = ""
    env_id: str | None = None

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9_.-]*$", self.name or ""):
            raise SpecError(f"benchmark name {self.name!r} must be lowercase letters, digits, '-', '_' or '.'")
        _check_entry_point("benchmark", self.name, self.entry_point)
        if self.env_id is not None:
            parse_env_id(self.env_id)


@dataclass(frozen=True)
class SandboxProviderSpec:
    """A sandbox provider (``--sandbox NAME``; ``rolloutgym.sandboxes.get_provider(NAME)``).

    ``entry_point`` names ``factory(**options) -> rolloutgym.sandboxes.SandboxProvider``.
    ``capabilities`` says what the backend can do beyond exec and copy (``image``: runs a
    given image; ``build``: builds a Dockerfile context; ``snapshot``; ``network``).
    """

    name: str
    entry_point: str
    description: str = ""
    capabilities: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9_.-]*$", self.name or ""):
            raise SpecError(f"sandbox provider name {self.name!r} must be lowercase letters, digits, '-', '_' or '.'")
        _check_entry_point("sandbox provider", self.name, self.entry_point)
