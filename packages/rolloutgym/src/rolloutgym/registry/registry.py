"""The :class:`Registry`: a pluggy plugin manager plus lookups over what plugins register.

It answers lookups (specs, task indexes, imported factories) and caches them, and holds the
one builder of a registered env (:meth:`Registry.env_builder`, used by :mod:`rolloutgym.sources`
and by ``make``/``make_async``/``load``) and the one tagger (:func:`tag_env`).
Listing reads spec objects only; an environment's module is imported at ``make()``. A lookup
of ``ns/name-vN`` calls only the spec functions of the plugin that declares ``ns`` (entry point
group ``rolloutgym.envs``, :mod:`._namespaces`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pluggy
from rolloutgym_protocol import AsyncEnv, hookspecs
from rolloutgym_protocol.errors import (
    ConfigError,
    EnvNotFound,
    ExporterNotFound,
    GraderNotFound,
    PolicyNotFound,
    SpecError,
    TaskNotFound,
    TemplateNotFound,
    did_you_mean,
)
from rolloutgym_protocol.specs import (
    BenchmarkSpec,
    EnvSpec,
    ExporterSpec,
    GraderSpec,
    PolicySpec,
    SandboxProviderSpec,
    TemplateSpec,
    is_env_url,
    parse_env_id,
)

from ._build import adapt_env, import_entry_point, tag_env
from ._hints import env_not_found_message, install_hint, provider_of
from ._namespaces import EnvDeclaration, declared_sources, declaring_distributions, is_declaring
from ._plugins import PluginInfo, core_plugins, discover_plugins, warn_unmarked_hooks
from ._policy_refs import ACCEPTED_FORMS, normal_policy_reference, unknown_provider
from ._tasks import TaskIndex, task_split

__all__ = ["Registered", "Registry"]


@dataclass(frozen=True)
class Registered:
    """A spec together with the plugin that registered it."""

    spec: Any
    plugin: PluginInfo


class Registry:
    """Owns a ``pluggy.PluginManager`` and answers what is installed.

    Hooks are dispatched by pluggy: only functions marked ``@hookimpl`` count, and a hook
    implementation that matches no hookspec (a misspelling such as ``rolloutgym_env``) is
    reported on its plugin's :attr:`PluginInfo.warnings` (shown by ``rolloutgym plugins``).

    Args:
        load_entry_points: discover plugins from installed distributions
            (entry point group ``rolloutgym``), honouring ``ROLLOUTGYM_PLUGINS`` and
            ``ROLLOUTGYM_DISABLE_PLUGINS``.
        core: register the core's own plugins (toy envs, built-in policies, verifier
            primitives, exporters); defaults to ``load_entry_points``. No allow-list
            switches them off.
    """

    def __init__(self, *, load_entry_points: bool = True, core: bool | None = None) -> None:
        self.plugin_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.plugin_manager.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.load_entry_points = load_entry_points
        self.core = load_entry_points if core is None else core
        self._by_name: dict[str, PluginInfo] = {}
        self._cache: dict[str, dict[str, Registered]] = {}
        self._tasks: dict[str, TaskIndex] = {}
        self._factories: dict[str, Any] = {}
        self._builders: dict[str, Callable[[Any], Any]] = {}
        self._adopted: dict[str, Any] = {}  # env id -> the ResolvedEnv of an env file (adopt)
        found = (core_plugins() if self.core else []) + (discover_plugins() if load_entry_points else [])
        for info in found:
            self._add(info)
        # Who declares which env namespace: read from metadata, nothing imported (issue 46).
        self._env_sources = declared_sources(self.plugins, core=self.core, entry_points_too=load_entry_points)
        self._declaring = declaring_distributions(self._env_sources)

    def _add(self, info: PluginInfo) -> None:
        if info.module is not None:
            name = f"{info.name}:{info.value}"
            try:
                self.plugin_manager.register(info.module, name=name)
            except Exception as exc:  # a module with malformed hook implementations
                info.status, info.error, info.module = "failed", f"{type(exc).__name__}: {exc}", None
            else:
                self._by_name[name] = info
                warn_unmarked_hooks(info)
        self.plugins.append(info)
        self._cache.clear()
        self._tasks.clear()
        self._factories.clear()
        self._builders.clear()
        self._check_hooks()

    def register(self, module: Any, *, name: str | None = None) -> None:
        """Register a hook-implementation module or object directly (tests, notebooks)."""
        label = name or getattr(module, "__name__", repr(module))
        self._add(PluginInfo(label, label, None, None, module=module))

    def _check_hooks(self) -> None:
        """Name hook implementations that match no hookspec (pluggy's ``check_pending``), without failing."""
        try:
            self.plugin_manager.check_pending()
        except pluggy.PluginValidationError:
            known = [name for name in dir(hookspecs) if name.startswith(hookspecs.PROJECT_NAME + "_")]
            for hook_name, caller in vars(self.plugin_manager.hook).items():
                if not isinstance(caller, pluggy.HookCaller) or caller.has_spec():
                    continue
                for implementation in caller.get_hookimpls():
                    info = self._by_name.get(implementation.plugin_name)
                    if info is None or implementation.optionalhook:
                        continue
                    warning = (
                        f"unknown hook {hook_name!r}: no such hookspec, so it is never called."
                        f"{did_you_mean(hook_name, known)}"
                    )
                    if warning not in info.warnings:
                        info.warnings.append(warning)

    def unknown_hooks(self) -> dict[str, list[str]]:
        """Plugins with hook implementations that match no hookspec: ``{plugin name: [warning, ...]}``."""
        return {info.name: list(info.warnings) for info in self.plugins if info.warnings}

    def call_hook(
        self, hook_name: str, *, only: Callable[[PluginInfo], bool] | None = None, **kwargs: Any
    ) -> list[tuple[PluginInfo, Any]]:
        """Call hook ``hook_name`` through pluggy, each implementation on its own (``only``: of these plugins).

        Returns ``(plugin, result)`` per implementation in pluggy's call order. An
        implementation that raises marks its plugin ``failed`` (with the error) and the
        others still run: one broken plugin never breaks the rest.
        """
        caller = getattr(self.plugin_manager.hook, hook_name)
        results: list[tuple[PluginInfo, Any]] = []
        for implementation in reversed(caller.get_hookimpls()):  # pluggy calls the last registered first
            info = self._by_name.get(implementation.plugin_name)
            if info is None or info.status != "loaded" or (only is not None and not only(info)):
                continue
            try:
                result = implementation.function(*(kwargs[name] for name in implementation.argnames))
            except Exception as exc:  # noqa: BLE001 - report, keep the other plugins
                info.status = "failed"
                info.error = f"{hook_name}() raised {type(exc).__name__}: {exc}"
                continue
            results.append((info, result))
        return results

    # -- collecting specs -------------------------------------------------------------

    def _collect(self, hook_name: str, spec_type: type, key: Callable[[Any], str]) -> dict[str, Registered]:
        cached = self._cache.get(hook_name)
        if cached is None:
            cached = self._cache[hook_name] = self._tabulate(hook_name, spec_type, key, self.call_hook(hook_name))
        return cached

    def _tabulate(
        self, hook_name: str, spec_type: type, key: Callable[[Any], str], pairs: list[tuple[PluginInfo, Any]]
    ) -> dict[str, Registered]:
        """``{key: Registered}`` of what plugins returned, in plugin order; a wrong type fails its plugin."""
        collected: dict[str, Registered] = {}
        for info, returned in sorted(pairs, key=lambda pair: self.plugins.index(pair[0])):
            specs = list(returned or ())
            wrong = [spec for spec in specs if not isinstance(spec, spec_type)]
            if wrong:
                info.status = "failed"
                info.error = f"{hook_name}() returned {type(wrong[0]).__name__}, expected {spec_type.__name__}"
                continue
            for spec in specs:
                name = key(spec)
                if name in collected:
                    other = collected[name].plugin
                    info.error = (info.error or "") + f" duplicate {name!r} (already registered by {other.describe()});"
                    continue
                collected[name] = Registered(spec, info)
        return collected

    def env_specs(self) -> dict[str, Registered]:
        """Every registered environment, by id: every declared namespace, and the plugins that declare none."""
        cached = self._cache.get("rolloutgym_envs")
        if cached is None:
            cached = self._cache["rolloutgym_envs"] = self._env_table(self._env_sources)
        return cached

    def namespace_env_specs(self, namespace: str) -> dict[str, Registered]:
        """The environments of ``namespace``, by id. Of the plugins that declare namespaces (entry point group
        ``rolloutgym.envs``) only those declaring ``namespace`` are asked; plugins that declare none always are."""
        table = self._cache.get("rolloutgym_envs")
        if table is None:
            table = self._cache.get(f"rolloutgym_envs:{namespace}")
        if table is None:
            sources = [source for source in self._env_sources if namespace in source.namespaces]
            table = self._cache[f"rolloutgym_envs:{namespace}"] = self._env_table(sources)
        return {env_id: entry for env_id, entry in table.items() if entry.spec.namespace == namespace}

    def has_env(self, env_id: str) -> bool:
        """Whether ``env_id`` is a registered id (exactly), asking only the plugin that declares its namespace."""
        return env_id in self.namespace_env_specs(env_id.partition("/")[0])

    def _env_table(self, sources: list[EnvDeclaration]) -> dict[str, Registered]:
        pairs: list[tuple[PluginInfo, Any]] = []
        for source in sources:
            try:
                pairs.append((source.plugin, source.load()))
            except Exception as exc:  # noqa: BLE001 - report, keep the other plugins
                source.plugin.status = "failed"
                source.plugin.error = f"env specs '{source.value}' raised {type(exc).__name__}: {exc}"
        # Plugins that declare no namespace (registered the old way): their rolloutgym_envs hooks, as before.
        pairs += self.call_hook("rolloutgym_envs", only=lambda info: not is_declaring(info, self._declaring))
        table = self._tabulate("rolloutgym_envs", EnvSpec, lambda spec: spec.id, pairs)
        for source in sources:
            undeclared = sorted({entry.spec.namespace for entry in table.values() if entry.plugin is source.plugin})
            undeclared = [name for name in undeclared if not any(name in other.namespaces for other in sources)]
            if undeclared and source.plugin.distribution:
                warning = (
                    f"registers namespace(s) {', '.join(undeclared)} that it does not declare, so lookups of "
                    f'them import every plugin: add them to [project.entry-points."rolloutgym.envs"]'
                )
                if warning not in source.plugin.warnings:
                    source.plugin.warnings.append(warning)
        return table

    def policy_specs(self) -> dict[str, Registered]:
        """Every registered policy provider, by name."""
        return self._collect("rolloutgym_policies", PolicySpec, lambda spec: spec.name)

    def template_specs(self) -> dict[str, Registered]:
        return self._collect("rolloutgym_templates", TemplateSpec, lambda spec: spec.name)

    def grader_specs(self) -> dict[str, Registered]:
        return self._collect("rolloutgym_graders", GraderSpec, lambda spec: spec.name)

    def exporter_specs(self) -> dict[str, Registered]:
        return self._collect("rolloutgym_exporters", ExporterSpec, lambda spec: spec.name)

    def benchmark_specs(self) -> dict[str, Registered]:
        """Every registered ready-made benchmark (``rolloutgym.evals.make_benchmark``), by name."""
        return self._collect("rolloutgym_benchmarks", BenchmarkSpec, lambda spec: spec.name)

    def sandbox_specs(self) -> dict[str, Registered]:
        """Every registered sandbox provider (``rolloutgym.sandboxes.get_provider``), by name."""
        return self._collect("rolloutgym_sandboxes", SandboxProviderSpec, lambda spec: spec.name)

    def register_commands(self, cli: Any) -> None:
        """Let plugins add CLI command groups (hook ``rolloutgym_commands(cli)``)."""
        self.call_hook("rolloutgym_commands", cli=cli)

    def failed_plugins(self) -> list[PluginInfo]:
        return [info for info in self.plugins if info.status == "failed"]

    # -- environments -----------------------------------------------------------------

    def envs(self, namespace: str | None = None) -> list[EnvSpec]:
        """Environment specs, sorted by id, optionally for one namespace."""
        table = self.env_specs() if namespace is None else self.namespace_env_specs(namespace)
        return sorted((entry.spec for entry in table.values()), key=lambda spec: spec.id)

    def adopt(self, resolved: Any) -> str:
        """Make an env file's env (a :class:`~rolloutgym.sources.ResolvedEnv`) known by its id here.

        Code that holds only a run's env id (``file/<slug>-vN``: training, evaluation) then
        builds it as it builds a registered env (``sources.resolve_recorded`` adopts what it
        resolves from a run header). Returns the id.
        """
        self._adopted[resolved.env_id] = resolved
        return str(resolved.env_id)

    def adopted(self, env_id: str) -> Any:
        """The env file's ``ResolvedEnv`` adopted under ``env_id`` (:meth:`adopt`), else ``None``."""
        return self._adopted.get(env_id)

    def _adopted_entry(self, env_id: str) -> Registered:
        resolved = self._adopted[env_id]
        spec = EnvSpec(
            id=env_id,
            entry_point="rolloutgym.sources:make",
            max_steps=resolved.max_steps,
            timeout=resolved.timeout,
            replayable=resolved.replayable,
            splits=tuple(sorted({task_split(item) or "" for item in resolved.tasks} - {""})),
        )
        return Registered(spec, PluginInfo("env file", resolved.origin, None, None))

    def resolve_env(self, env_id: str) -> Registered:
        """Find an env by id; ``namespace/name`` without a version resolves to the newest."""
        if env_id in self._adopted:
            return self._adopted_entry(env_id)
        try:
            namespace, name, version = parse_env_id(env_id)
        except SpecError:
            namespace, name, version = env_id.partition("/")[0], "", None
        # The plugin that declares the namespace first; everything only when that misses.
        for table in (lambda: self.namespace_env_specs(namespace), self.env_specs):
            registered = table()
            if env_id in registered:
                return registered[env_id]
            candidates = [
                entry for entry in registered.values() if entry.spec.namespace == namespace and entry.spec.name == name
            ]
            if version is None and name and candidates:
                return max(candidates, key=lambda entry: entry.spec.version)
        raise EnvNotFound(env_not_found_message(self, env_id, namespace))

    def install_hint(self, name: str, kind: str | None = None) -> str:
        """How to get the plugin that provides ``name`` (``kind``: "envs", "policies" or "templates"; see
        :func:`rolloutgym.registry._hints.install_hint`)."""
        return install_hint(self.plugins, name, kind)

    def task_index(self, env_id: str) -> TaskIndex:
        """The env's tasks with their ids, for O(1) lookups; loaded once per registry."""
        spec = self.resolve_env(env_id).spec
        index = self._adopted[spec.id].index if spec.id in self._adopted else self._tasks.get(spec.id)
        if index is None:
            items: list[Any] = []
            if spec.tasks is not None:
                loader = import_entry_point(spec.tasks, what=f"task loader of {spec.id}")
                items = list(loader())
            index = self._tasks[spec.id] = TaskIndex(items)
        return index

    def tasks(self, env_id: str) -> list[Any]:
        """The env's task items (empty when it has no task loader)."""
        index = self.task_index(env_id)
        return list(index.items) if index.has_tasks else []

    def resolve_task(self, env_id: str, task: Any) -> tuple[int, Any]:
        """Find a task by index, id or item; returns ``(index, item)`` (``(-1, task)`` for an unknown item)."""
        spec = self.resolve_env(env_id).spec
        index = self.task_index(spec.id)
        if not index.has_tasks:
            raise TaskNotFound(f"environment '{spec.id}' has no tasks")
        return index.find(task, spec.id)

    def env_factory(self, env_id: str) -> Any:
        """The imported factory (``EnvSpec.entry_point``) of an env; imported once per registry."""
        spec = self.resolve_env(env_id).spec
        factory = self._factories.get(spec.id)
        if factory is None:
            factory = self._factories[spec.id] = import_entry_point(spec.entry_point, what=f"environment {spec.id}")
        return factory

    # -- building: the one builder of a registered env (rolloutgym.sources uses it too) ---

    def env_builder(self, env_id: str, kwargs: dict[str, Any] | None = None) -> Callable[[Any], Any]:
        """``build(item)``: a fresh env of ``env_id`` for a task item, tagged with its env id and task id.

        The spec, task index and imported factory are looked up once (and cached by the
        registry), so building one env per episode costs the factory call and nothing more.
        """
        spec: EnvSpec = self.resolve_env(env_id).spec
        if spec.id in self._adopted:
            return self._adopted[spec.id].build  # type: ignore[no-any-return]
        cached = None if kwargs else self._builders.get(spec.id)
        if cached is not None:
            return cached
        index = self.task_index(spec.id)
        factory = self.env_factory(spec.id)
        arguments = {**spec.kwargs, **(kwargs or {})}
        what = f"environment factory '{spec.entry_point}'"
        if index.has_tasks:

            def build(item: Any) -> Any:
                return tag_env(factory(**arguments, task=item), spec.id, index.id_of(item), what=what)
        else:

            def build(item: Any) -> Any:
                return tag_env(factory(**arguments), spec.id, None, what=what)

        if not kwargs:
            self._builders[spec.id] = build
        return build

    def make(self, env_id: str, *, task: Any = None, **kwargs: Any) -> Any:
        """Create an environment instance (sync envs are ``gymnasium.Env``).

        ``env_id`` is a registered id or an ``http(s)://``/``ws(s)://`` URL of ``rolloutgym serve``
        (env files: ``rolloutgym.make(PATH)``). ``task`` is a task index, a task id, or a task
        item; it defaults to the first task (O(1) lookups). Keyword arguments override the spec's
        defaults and go to the env factory.
        """
        return self._make(env_id, task, kwargs, asynchronous=False)

    def make_async(self, env_id: str, *, task: Any = None, **kwargs: Any) -> AsyncEnv[Any, Any]:
        """Like :meth:`make`, adapted to an :class:`AsyncEnv` when the env is sync."""
        return self._make(env_id, task, kwargs, asynchronous=True)  # type: ignore[no-any-return]

    def _make(self, env_id: str, task: Any, kwargs: dict[str, Any], *, asynchronous: bool) -> Any:
        if is_env_url(env_id):
            from ..serve.client import make_remote

            return make_remote(env_id, task=task, kwargs=kwargs or None, asynchronous=True if asynchronous else None)
        spec = self.resolve_env(env_id).spec
        environment = self.env_builder(spec.id, kwargs)(self.task_index(spec.id).find(task, spec.id)[1])
        return adapt_env(environment) if asynchronous else environment

    def load(self, env_id: str, *, split: str | None = None, **kwargs: Any) -> Any:
        """An ``RLDataset`` of the env's tasks (optionally one split) with ``make_env``."""
        from ..datasets import RLDataset

        spec = self.resolve_env(env_id).spec
        index = self.task_index(spec.id)
        indexed = list(enumerate(index.items)) if index.has_tasks else []
        if split is not None:
            splits = sorted({task_split(item) or "" for _, item in indexed} - {""})
            indexed = [(position, item) for position, item in indexed if task_split(item) == split]
            if not indexed:
                raise ConfigError(
                    f"environment '{spec.id}' has no tasks in split '{split}'; "
                    f"its splits are: {', '.join(splits) or 'none'}"
                )
        return RLDataset(
            [item for _, item in indexed],
            metadata={"env_id": spec.id, "split": split},
            make_env=self.env_builder(spec.id, kwargs),
            get_item_id=lambda item: index.id_of(item) or str(item),
        )

    # -- policies and others ----------------------------------------------------------

    def policies(self) -> list[PolicySpec]:
        return sorted((entry.spec for entry in self.policy_specs().values()), key=lambda spec: spec.name)

    def make_policy(self, reference: str, **options: Any) -> Any:
        """Create a policy from ``"provider"`` or ``"provider:model"`` (e.g. ``"openai:gpt-4o-mini"``; the rollout
        SDK's ``openai/gpt-4o-mini`` is read so)."""
        provider, model = self.check_policy(reference)
        spec: PolicySpec = self.policy_specs()[provider].spec
        factory = import_entry_point(spec.entry_point, what=f"policy provider {provider}")
        return factory(model or None, **options)

    def policy_reference(self, reference: str) -> str:
        """``reference`` as ``provider[:model]`` (``openai/gpt-4o-mini`` -> ``openai:gpt-4o-mini``); raises as
        :meth:`make_policy` would for an unknown provider or a missing model, without building anything."""
        provider, model = self.check_policy(reference)
        return f"{provider}:{model}" if model else provider

    def check_policy(self, reference: str) -> tuple[str, str]:
        """``(provider, model)`` of a policy reference; PolicyNotFound or ConfigError naming the accepted forms."""
        registered = self.policy_specs()
        provider, _, model = normal_policy_reference(reference, registered).partition(":")
        if provider not in registered:
            unknown = unknown_provider(reference, provider)
            if unknown is not None and provider_of(provider.partition("/")[0], "policies") is None:
                raise unknown
            if unknown is not None:  # openai/gpt-4o-mini without the openai plugin: install it, write openai:...
                provider, _, model = provider.partition("/")
            names = sorted(registered)
            message = (
                f"no policy provider '{provider}'.{did_you_mean(provider, names)} "
                f"Installed providers: {', '.join(names) or 'none'}. Accepted forms: {ACCEPTED_FORMS}."
            )
            if (distribution := provider_of(provider, "policies")) is not None:
                message += f" '{provider}' comes from '{distribution}'. {self.install_hint(provider, 'policies')}"
            raise PolicyNotFound(message)
        spec: PolicySpec = registered[provider].spec
        if spec.requires_model and not model:
            example = spec.example or f"{provider}:MODEL"
            raise ConfigError(f"policy provider '{provider}' needs a model: use --policy {example}")
        return provider, model

    def _named(self, kind: str, table: dict[str, Registered], name: str, error: type[Exception]) -> Any:
        if name not in table:
            names = sorted(table)
            message = f"no {kind} '{name}'.{did_you_mean(name, names)} Available: {', '.join(names) or 'none'}."
            hinted = "templates" if kind == "template" else None
            if hinted and (distribution := provider_of(name, hinted)) is not None:
                message += f" '{name}' comes from '{distribution}'. {self.install_hint(name, hinted)}"
            raise error(message)
        return table[name].spec

    def template(self, name: str) -> TemplateSpec:
        return self._named("template", self.template_specs(), name, TemplateNotFound)

    def grader(self, name: str) -> GraderSpec:
        return self._named("grader", self.grader_specs(), name, GraderNotFound)

    def exporter(self, name: str) -> ExporterSpec:
        return self._named("export format", self.exporter_specs(), name, ExporterNotFound)
