"""The typer application object and shared helpers for the command modules."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    name="rolloutgym",
    help="Run, inspect and compare LLM agent environments. 'rolloutgym list' shows what is installed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# Markup is off by default: user text (paths, ids, install hints like "rolloutgym[report]",
# error messages) prints as written. Styled output passes markup=True and escapes what it
# interpolates (markup_safe).
console = Console(highlight=False, soft_wrap=True, markup=False)
error_console = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


def markup_safe(text: object) -> str:
    """``text`` for a ``markup=True`` print: brackets stay brackets."""
    return escape(str(text))


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("rolloutgym")
        except PackageNotFoundError:  # a source checkout without an install
            number = "unknown"
        console.print(f"rolloutgym {number}")
        raise typer.Exit(0)


@app.callback()
def _main_options(
    show_version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
    ),
) -> None:
    """Run, inspect and compare LLM agent environments. 'rolloutgym list' shows what is installed."""


def print_table(table: Any) -> None:
    """Print a table; ids are never cut to '…'. Off a terminal, as wide as it needs; on a terminal too
    narrow for it (80 columns), one record per row (see :func:`print_records`)."""
    if console.is_terminal:
        from rich.measure import Measurement

        if Measurement.get(console, console.options.update_width(100_000), table).maximum <= console.width:
            console.print(table)
        else:
            print_records(table)
        return
    # A table is drawn at its natural width when the console is wider: one pass (measuring it first
    # to size the console cost a second one, a third of `show`'s time on a 12,500-task run).
    Console(file=console.file, width=max(console.width, 100_000), highlight=False, markup=False).print(table)


def print_records(table: Any) -> None:
    """``table`` one record per row: the first cell whole on its own line, the others as ``column: value``
    below it, wrapped at the terminal's width between values, never inside an id."""
    import textwrap

    if table.title:
        console.print(str(table.title))
    headers = [str(column.header) for column in table.columns]
    columns = [[str(cell) for cell in column.cells] for column in table.columns]
    width = max(console.width - 2, 20)
    for row in zip(*columns, strict=True):
        console.print(row[0])
        pairs = zip(headers[1:], row[1:], strict=True)
        rest = [f"{header}: {value}" for header, value in pairs if value not in ("", "-")]
        lines, line = [], ""
        for part in rest:
            if line and len(line) + 3 + len(part) > width:
                lines.append(line)
                line = part
            else:
                line = f"{line} · {part}" if line else part
        lines.append(line)
        console.print(textwrap.indent("\n".join(lines), "  "))
    if table.caption:
        console.print(str(table.caption))


def shown_ks(ks: Any) -> list[int]:
    """The k values worth printing out of 1..n: 1, 2, 4, 8, ... and n."""
    ks = sorted(ks)
    if not ks:
        return []
    largest = ks[-1]
    return [k for k in ks if k & (k - 1) == 0 or k == largest]


EXIT_OK = 0
EXIT_RUN_ERRORS = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (2: usage/config)."""
    error_console.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    raise typer.Exit(code)


def output_path(path: Any, option: str) -> Any:
    """Check that ``path`` can be written (its folder made), or fail with one line that says why."""
    import os
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        fail(f"{option} {path} is a folder; give a file path, e.g. {path / 'run.jsonl'}")
    blocking = next((folder for folder in path.parents if folder.exists() and not folder.is_dir()), None)
    if blocking is not None:
        fail(f"cannot write {option} {path}: {blocking} is a file, not a folder; choose another {option}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(
            f"cannot write {option} {path}: cannot create the folder {path.parent} ({exc.strerror or exc}); "
            f"choose another {option}"
        )
    if not os.access(path.parent, os.W_OK):
        fail(f"cannot write {option} {path}: the folder {path.parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        fail(f"cannot write {option} {path}: the file is not writable")
    return path


def parse_key_values(pairs: list[str] | None, option: str) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` options; values are JSON when they parse as JSON."""
    import json

    result: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            fail(f"{option} expects KEY=VALUE, got {pair!r}")
        try:
            result[key] = json.loads(raw)
        except json.JSONDecodeError:
            result[key] = raw
    return result


def is_interactive() -> bool:
    return sys.stderr.isatty()
