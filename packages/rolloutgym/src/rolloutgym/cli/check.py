"""``rolloutgym check ENV``: the env's report card (exit 1 when a check failed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from ._app import EXIT_RUN_ERRORS, app, console, fail, markup_safe, output_path, parse_key_values, print_table

_STYLES = {"pass": "green", "fail": "bold red", "known": "yellow", "warn": "yellow", "skip": "dim"}
_SHOWN_FINDINGS = 5


@app.command("check")
def check_command(
    env: str = typer.Argument(..., help="Environment id, env file (.py/.json/.jsonl), task folder (Harbor) or URL."),
    sample: int = typer.Option(10, "--sample", "-s", help="Tasks the episode checks run on (a seeded sample)."),
    all_tasks: bool = typer.Option(False, "--all", help="Every task instead of a sample."),
    seed: int = typer.Option(0, "--seed", help="Seeds the sample and every episode."),
    only: Optional[str] = typer.Option(
        None,
        "--only",
        help="Only these checks (comma-separated): ceiling,floor,determinism,probe,lint,signal,containment.",
    ),
    skip: Optional[str] = typer.Option(None, "--skip", help="Leave these checks out (comma-separated)."),
    probes: Optional[str] = typer.Option(None, "--probe", help="Only these hack probes (comma-separated names)."),
    signal: Optional[str] = typer.Option(
        None,
        "--signal",
        help="Also measure signal with this policy (e.g. random, hf:tiny): share of tasks with unequal rewards.",
    ),
    k: int = typer.Option(4, "-k", help="Samples per task for --signal."),
    waive: Optional[list[str]] = typer.Option(
        None, "--waive", help="CHECK=REASON: report that check's failure as known, with the reason (repeatable)."
    ),
    env_args: Optional[list[str]] = typer.Option(None, "--env-arg", help="KEY=VALUE passed to the env factory."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Step budget per episode."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Wall-clock budget per episode, seconds."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write the JSON report to this file."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every finding, not the first few."),
) -> None:
    """Check an env: oracle ceiling, null floor, determinism, hack probe, task lint, containment (and signal)."""
    from ..checks import ALL_CHECKS, DEFAULT_CHECKS, check

    checks = _chosen_checks(only, skip, signal, ALL_CHECKS, DEFAULT_CHECKS)
    if sample < 1 and not all_tasks:
        fail(f"--sample must be at least 1 (or --all for every task), got {sample}")
    waivers = {}
    for pair in waive or []:
        name, sep, reason = pair.partition("=")
        if not sep or not name or not reason.strip():
            fail(f"--waive expects CHECK=REASON (e.g. probe:negation='the grader reads the last number'), got {pair!r}")
        waivers[name] = reason.strip()
    report = check(
        env,
        sample=None if all_tasks else sample,
        seed=seed,
        checks=checks,
        probes=[name for name in (probes or "").split(",") if name] or None,
        waivers=waivers,
        signal_policy=signal or "random",
        signal_k=k,
        env_kwargs=parse_key_values(env_args, "--env-arg"),
        max_steps=max_steps,
        timeout=timeout,
    )
    if out is not None:
        output_path(out, "--out").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    if as_json:
        console.print_json(json.dumps(report.to_dict()))
    else:
        print_card(report, verbose=verbose)
    if not report.ok:
        raise typer.Exit(EXIT_RUN_ERRORS)


def _chosen_checks(
    only: Optional[str], skip: Optional[str], signal: Optional[str], every: tuple[str, ...], default: tuple[str, ...]
) -> list[str]:
    names = [name.strip() for name in only.split(",") if name.strip()] if only else list(default)
    if signal and "signal" not in names:
        names.append("signal")
    left_out = [name.strip() for name in (skip or "").split(",") if name.strip()]
    unknown = [name for name in names + left_out if name not in every]
    if unknown:
        fail(f"no check {', '.join(map(repr, unknown))}; the checks are: {', '.join(every)}")
    return [name for name in names if name not in left_out]


def print_card(report: Any, *, verbose: bool = False) -> None:
    """The report card as a rich table, failures first, with their findings underneath."""
    from rich.table import Table
    from rich.text import Text

    sampled = f"{len(report.tasks_checked)} of {report.tasks_total} task(s)"
    verdict = "[bold green]PASS[/]" if report.ok else "[bold red]FAIL[/]"
    console.print(f"{verdict} [bold]{markup_safe(report.env_id)}[/]  ({sampled}, {report.seconds:.1f} s)", markup=True)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, highlight=False)
    table.add_column("status")
    table.add_column("check")
    table.add_column("result")
    for result in report.sorted_results():
        style = _STYLES.get(result.status, "")
        summary = result.summary + (f" (known: {result.reason})" if result.reason else "")
        table.add_row(Text(result.status, style=style), result.name, summary)
    print_table(table)
    for result in report.sorted_results():
        if result.status in ("fail", "known", "warn") and result.findings:
            shown = result.findings if verbose else result.findings[:_SHOWN_FINDINGS]
            console.print(f"\n[bold]{markup_safe(result.name)}[/]", markup=True)
            for finding in shown:
                console.print(f"  - {finding}")
            if len(shown) < len(result.findings):
                console.print(f"  ... {len(result.findings) - len(shown)} more (--verbose shows them)")
