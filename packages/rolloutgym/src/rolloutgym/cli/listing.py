"""``rolloutgym list``, ``info`` and ``plugins``: what is installed."""

from __future__ import annotations

from collections import Counter
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from ._app import app, console, fail, markup_safe


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
    table.add_column("id", style="bold")
    table.add_column("tags")
    table.add_column("description", overflow="fold")
    for spec in specs:
        description = spec.description.split(". ")[0].rstrip(".")
        table.add_row(spec.id, ", ".join(spec.tags), description)
    console.print(table)
    if namespace is None:
        policies = Table(title="Policies (--policy NAME[:MODEL])", title_justify="left")
        policies.add_column("name", style="bold")
        policies.add_column("description", overflow="fold")
        for policy in registry.policies():
            example = f" (e.g. {policy.example})" if policy.example else ""
            policies.add_row(policy.name, policy.description + example)
        console.print(policies)
    failed = registry.failed_plugins()
    if failed:
        console.print(f"[yellow]{len(failed)} plugin(s) failed to load; run 'rolloutgym plugins' for details.[/]", markup=True)


@app.command("info")
def info_command(env: str = typer.Argument(..., help="Environment id, e.g. toy/guess-v0.")) -> None:
    """Describe an environment: tasks, splits, spaces, budgets and policies that fit."""
    from ..registry import get_registry, task_id, task_split

    registry = get_registry()
    registered = registry.resolve_env(env)
    spec = registered.spec
    plugin = registered.plugin
    console.print(f"[bold]{markup_safe(spec.id)}[/]  (plugin {markup_safe(plugin.distribution or plugin.name)} {markup_safe(plugin.version or '')})", markup=True)
    if spec.description:
        console.print(spec.description)
    if spec.tags:
        console.print(f"tags: {', '.join(spec.tags)}")
    items = registry.tasks(spec.id)
    splits = Counter(task_split(item) or "-" for item in items)
    console.print(f"tasks: {len(items)}" + (f"  ({', '.join(f'{name}: {count}' for name, count in sorted(splits.items()))})" if items else ""))
    if items:
        preview = [task_id(item, index) for index, item in enumerate(items[:8])]
        console.print("  " + ", ".join(preview) + (" ..." if len(items) > 8 else ""))
    budgets = [f"max_steps={spec.max_steps}" if spec.max_steps is not None else None, f"timeout={spec.timeout}s" if spec.timeout is not None else None]
    console.print("budgets: " + (", ".join(b for b in budgets if b) or "none"))
    environment = registry.make(spec.id)
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
        model_providers = [policy.name for policy in registry.policies() if policy.requires_model and policy.name != "replay"]
        console.print("policies: " + ", ".join(fits + [f"{name}:MODEL" for name in model_providers] + ["replay:RUN_FILE"]))
    finally:
        result = environment.close()
        if hasattr(result, "__await__"):
            import asyncio

            asyncio.run(result)  # type: ignore[arg-type]
    console.print(f"replayable grading (rescore): {'yes' if spec.replayable else 'no'}")


@app.command("plugins")
def plugins_command() -> None:
    """Installed plugins, their versions and load status."""
    from ..registry import get_registry

    registry = get_registry()
    registry.env_specs(), registry.policy_specs(), registry.template_specs(), registry.grader_specs(), registry.exporter_specs()
    table = Table(title="Plugins (entry point group 'rolloutgym')", title_justify="left")
    for column in ("name", "distribution", "version", "entry point", "status"):
        table.add_column(column)
    for info in registry.plugins:
        colour = {"loaded": "green", "failed": "red", "disabled": "yellow"}[info.status]
        table.add_row(info.name, info.distribution or "-", info.version or "-", info.value, Text(info.status, style=colour))
    console.print(table)
    for info in registry.plugins:
        if info.error:
            console.print(f"[red]{markup_safe(info.describe())}:[/] {markup_safe(info.error)}", markup=True)
        for warning in info.warnings:
            console.print(f"[yellow]{markup_safe(info.describe())}:[/] {markup_safe(warning)}", markup=True)
