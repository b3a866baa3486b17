"""The rolloutgym plugin hooks (pluggy project ``rolloutgym``, entry point group ``rolloutgym``).

A plugin is a distribution with an entry point in group ``rolloutgym`` pointing at a
module of hook implementations::

    # pyproject.toml
    [project.entry-points.rolloutgym]
    sql = "rolloutgym_sql.plugin"

    # rolloutgym_sql/plugin.py
    from rolloutgym_protocol import EnvSpec, hookimpl

    @hookimpl
    def rolloutgym_envs():
        return [EnvSpec(id="sql/shop-v0", entry_point="rolloutgym_sql.shop:make_shop_env",
                        tasks="rolloutgym_sql.shop:shop_tasks")]

Hooks are synchronous, are called when the registry lists or resolves something, return
spec objects (or lists of them), and must import nothing heavy: the spec's entry point
strings are imported only when an env, policy or exporter is actually used.

Only functions marked ``@hookimpl`` are hook implementations. A marked function whose
name matches no hookspec here (``rolloutgym_env`` for ``rolloutgym_envs``) is never
called; ``rolloutgym plugins`` names it as an unknown hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pluggy

from .specs import BenchmarkSpec, EnvSpec, ExporterSpec, GraderSpec, PolicySpec, SandboxProviderSpec, TemplateSpec

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "rolloutgym"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def rolloutgym_envs() -> Sequence[EnvSpec]:
    """Return the environments this plugin provides.

    Called once per registry when environments are listed or made. Every id's namespace
    should be the plugin's own (``sql/...`` for ``rolloutgym-sql``).

    Example::

        @hookimpl
        def rolloutgym_envs():
            return [EnvSpec(id="mypkg/guess-v0", entry_point="mypkg.envs:GuessEnv",
                            tasks="mypkg.tasks:load_tasks", splits=("train", "test"))]
    """


@hookspec
def rolloutgym_policies() -> Sequence[PolicySpec]:
    """Return the policy providers this plugin provides (``--policy NAME:MODEL``).

    Example::

        @hookimpl
        def rolloutgym_policies():
            return [PolicySpec(name="openai", entry_point="rolloutgym_openai.policy:make_policy",
                               requires_model=True)]
    """


@hookspec
def rolloutgym_templates() -> Sequence[TemplateSpec]:
    """Return the declarative templates this plugin compiles (``sql``, ``workflow``, ...).

    Example::

        @hookimpl
        def rolloutgym_templates():
            return [TemplateSpec(name="sql", entry_point="rolloutgym_sql.template:compile_sql")]
    """


@hookspec
def rolloutgym_graders() -> Sequence[GraderSpec]:
    """Return named criterion graders (verifier primitives) usable from env files.

    Example::

        @hookimpl
        def rolloutgym_graders():
            return [GraderSpec(name="state_match", entry_point="mypkg.graders:state_match")]
    """


@hookspec
def rolloutgym_exporters() -> Sequence[ExporterSpec]:
    """Return training-data export formats (``rolloutgym export RUN --format NAME``).

    Example::

        @hookimpl
        def rolloutgym_exporters():
            return [ExporterSpec(name="sft", entry_point="mypkg.export:export_sft")]
    """


@hookspec
def rolloutgym_benchmarks() -> Sequence[BenchmarkSpec]:
    """Return ready-made benchmarks for ``rolloutgym.evals`` (``make_benchmark(NAME)``).

    Example::

        @hookimpl
        def rolloutgym_benchmarks():
            return [BenchmarkSpec(name="gsm8k", entry_point="rolloutgym_benchmarks.benchmarks:gsm8k",
                                  env_id="bench/gsm8k-v0")]
    """


@hookspec
def rolloutgym_sandboxes() -> Sequence[SandboxProviderSpec]:
    """Return sandbox providers (``--sandbox NAME``, ``rolloutgym.sandboxes.get_provider(NAME)``).

    Example::

        @hookimpl
        def rolloutgym_sandboxes():
            return [SandboxProviderSpec(name="docker", entry_point="mypkg.docker:DockerProvider",
                                        capabilities=("image", "build", "snapshot"))]
    """


@hookspec
def rolloutgym_commands(cli: Any) -> None:
    """Add command groups to the ``rolloutgym`` command line (like simonw/llm's ``register_commands``).

    Called when the command line starts, unless the command is one of the core's own
    (so ``rolloutgym list`` stays fast). ``cli`` is the ``typer.Typer`` application; add a
    group with ``cli.add_typer(...)`` or a command with ``@cli.command()``. Keep imports
    lazy: import the heavy modules inside the command functions, not in the hook.

    Example::

        import typer

        @hookimpl
        def rolloutgym_commands(cli):
            train = typer.Typer(help="Train a model on an environment.")

            @train.command("grpo")
            def grpo(env: str) -> None:
                from mypkg.training import run_grpo  # heavy: imported when the command runs

                run_grpo(env)

            cli.add_typer(train, name="train")
    """


@hookspec
def rolloutgym_hack_probes() -> Sequence[Any]:
    """Return the hack probes this plugin adds to ``rolloutgym check`` (its known attack classes).

    Called when ``rolloutgym check`` (or ``rolloutgym.check()``, or the conformance kit) runs
    the hack probe. Return subclasses of ``rolloutgym.checks.HackProbe`` (or ``"module:Class"``
    strings, imported then): each is an adversarial policy for one class of exploit, played on
    every checked task, that must score no more than the null policy. A probe's ``name`` is
    its check on the card (``probe:NAME``); ``exploit`` says in one line what a grader that
    falls for it does wrong; ``play(view)`` yields actions (see ``rolloutgym.checks.probes``).

    Example::

        @hookimpl
        def rolloutgym_hack_probes():
            from rolloutgym.checks import HackProbe

            class SqlCommentProbe(HackProbe):
                name = "sql-comment"
                exploit = "a query that comments out its WHERE clause matches the expected rows"

                def play(self, view):
                    yield view.reply("SELECT * FROM orders -- WHERE id = 1")

            return [SqlCommentProbe]
    """
