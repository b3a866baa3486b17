"""``rolloutgym list``, ``info`` and ``plugins``: what is installed."""

from __future__ import annotations

from collections import Counter
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from ._app import app, console, fail, markup_safe, print_table


@app.command("list")
def list_command(
    namespace: Optional[str] = typer.Argument(None, help="Only this namespace (e.g. 'sql')."),
) -> None:
    """List registered environments and policy providers."""
    from ..registry import get_registry

    registry = get_registry()
    specs = registry.envs(namespace)
    if namespace is not None and not specs:
        namespaces = sorted({spec.namespace for spec in registry.envs()})
        fail(f"no environments in namespace '{namespace}'. Installed namespaces: {', '.join(namespaces) or 'none'}.")
    table = Table(title="Environments", title_justify="left")
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("tags")
    table.add_column("description", overflow="fold")
    for spec in specs:
        description = spec.description.split(". ")[0].rstrip(".")
        table.add_row(spec.id, ", ".join(spec.tags), description)
    print_table(table)  # on a narrow terminal one env per record: no id cut to '…'
    if namespace is None:
        policies = Table(title="Policies (--policy NAME[:MODEL])", title_justify="left")
        policies.add_column("name", style="bold", no_wrap=True)
        policies.add_column("description", overflow="fold")
        for policy in registry.policies():
            example = f" (e.g. {policy.example})" if policy.example else ""
            policies.add_row(policy.name, policy.description + example)
        print_table(policies)
    failed = registry.failed_plugins()
    if failed:
        console.print(
            f"[yellow]{len(failed)} plugin(s) failed to load; run 'rolloutgym plugins' for details.[/]", markup=True
        )


@app.command("info")
def info_command(
    env: str = typer.Argument(
        ...,
        help="Environment id (e.g. toy/guess-v0), env file path (my_env.py) or served env URL: whatever 'run' accepts.",
    ),
) -> None:
    """Describe an environment: tasks, splits, spaces, budgets and policies that fit."""
    from ..registry import get_registry, task_split
    from ..sources import is_env_file, is_env_url, resolve_env

    registry = get_registry()
    if env.startswith("file/") and not is_env_file(env):
        fail(
            f"'{env}' is the id of an env file, which is found by its path, not by this id: "
            "run 'rolloutgym info path/to/the_env_file.py' (the path you gave 'rolloutgym run')."
        )
    if is_env_url(env) or is_env_file(env):
        resolved = resolve_env(env, registry)
        console.print(f"[bold]{markup_safe(resolved.env_id)}[/]  (from {markup_safe(resolved.origin)})", markup=True)
        description, tags, replayable = None, (), resolved.replayable
        budgets_of = (resolved.max_steps, resolved.timeout)
        spec = None
    else:
        registered = registry.resolve_env(env)
        spec = registered.spec
        plugin = registered.plugin
        console.print(
            f"[bold]{markup_safe(spec.id)}[/]  (plugin {markup_safe(plugin.distribution or plugin.name)} "
            f"{markup_safe(plugin.version or '')})",
            markup=True,
        )
        resolved = resolve_env(spec.id, registry)
        description, tags, replayable = spec.description, spec.tags, spec.replayable
        budgets_of = (spec.max_steps, spec.timeout)
    if description:
        console.print(description)
    if tags:
        console.print(f"tags: {', '.join(tags)}")
    items = [item for item in resolved.tasks if item is not None]
    splits = Counter(task_split(item) or "-" for item in items)
    console.print(
        f"tasks: {len(items)}"
        + (f"  ({', '.join(f'{name}: {count}' for name, count in sorted(splits.items()))})" if items else "")
    )
    if items:
        preview = resolved.task_ids[:8]
        console.print("  " + markup_safe(", ".join(preview)) + (" ..." if len(items) > 8 else ""), markup=True)
    max_steps, timeout = budgets_of
    budgets = [
        f"max_steps={max_steps}" if max_steps is not None else None,
        f"timeout={timeout}s" if timeout is not None else None,
    ]
    console.print("budgets: " + (", ".join(b for b in budgets if b) or "none"))
    environment = registry.make(spec.id) if spec is not None else resolved.make_task(0)
    try:
        console.print(f"observation space: {environment.observation_space!r}")
        console.print(f"action space: {environment.action_space!r}")
        from rolloutgym_protocol import find_attribute

        fits = ["random", "human"]
        if find_attribute(environment, "oracle_action") is not None:
            fits.insert(0, "oracle")
        fits.insert(1, "null")
        tools = find_attribute(environment, "tools")
        if tools:
            names = [tool.get("function", tool).get("name") for tool in tools if isinstance(tool, dict)]
            console.print(f"tools: {', '.join(str(name) for name in names)}")
        model_providers = [
            policy.name for policy in registry.policies() if policy.requires_model and policy.name != "replay"
        ]
        console.print(
            "policies: " + ", ".join(fits + [f"{name}:MODEL" for name in model_providers] + ["replay:RUN_FILE"])
        )
    finally:
        result = environment.close()
        if hasattr(result, "__await__"):
            import asyncio

            asyncio.run(result)  # type: ignore[arg-type]
    _print_capabilities(replayable, spec)


def _print_capabilities(replayable: bool, spec: Any) -> None:
    """Whether the env's trajectories can be re-graded, and whether it forks mid-episode (and the note why)."""
    console.print(f"replayable grading (rescore): {'yes' if replayable else 'no'}")
    if spec is not None:
        forks = "yes" if spec.forkable else "no"
        console.print(f"forks mid-episode (--branch-at): {forks}" + (f" ({spec.fork_note})" if spec.fork_note else ""))


@app.command("plugins")
def plugins_command() -> None:
    """Installed plugins, their versions and load status."""
    from ..registry import get_registry

    registry = get_registry()
    (
        registry.env_specs(),
        registry.policy_specs(),
        registry.template_specs(),
        registry.grader_specs(),
        registry.exporter_specs(),
        registry.benchmark_specs(),
    )
    table = Table(title="Plugins (entry point group 'rolloutgym')", title_justify="left")
    for column in ("name", "distribution", "version", "entry point", "status"):
        table.add_column(column)
    for info in registry.plugins:
        colour = {"loaded": "green", "failed": "red", "disabled": "yellow"}[info.status]
        table.add_row(
            info.name, info.distribution or "-", info.version or "-", info.value, Text(info.status, style=colour)
        )
    console.print(table)
    for info in registry.plugins:
        if info.error:
            console.print(f"[red]{markup_safe(info.describe())}:[/] {markup_safe(info.error)}", markup=True)
        for warning in info.warnings:
            console.print(f"[yellow]{markup_safe(info.describe())}:[/] {markup_safe(warning)}", markup=True)
