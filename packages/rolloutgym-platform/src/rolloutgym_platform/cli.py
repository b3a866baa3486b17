"""``rolloutgym platform serve`` and ``rolloutgym platform keys create``: the commands this distribution adds
through the core's ``rolloutgym_commands`` hook (the client commands, ``login``, ``push``, ``run --remote``,
``improve``, ``jobs``, ``job``, are the core's own).

Only typer is imported here; the server, database and workers load when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

__all__ = ["platform_app", "register"]

platform_app = typer.Typer(
    help="Serve the rollout platform (API, database, workers) and mint its API keys.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
keys_app = typer.Typer(help="API keys of the platform.", no_args_is_help=True, rich_markup_mode=None)
platform_app.add_typer(keys_app, name="keys")


def register(cli: Any) -> None:
    """Add the ``platform`` group to the ``rolloutgym`` typer app."""
    cli.add_typer(platform_app, name="platform")


def fail(message: str) -> NoReturn:
    """``error: message`` on stderr and exit 2 (a usage or configuration error)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@platform_app.command("serve")
def serve_command(
    data: Path = typer.Option(..., "--data", help="Folder for the database (SQLite), run files and models."),
    database: Optional[str] = typer.Option(
        None, "--database", help="Database URL, e.g. postgresql://user@host/db (default: SQLite in --data)."
    ),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8600, "--port"),
    workers: int = typer.Option(2, "--workers", help="Local worker processes (0: API only)."),
    lease: float = typer.Option(30.0, "--lease", help="Seconds a worker holds work without renewing its lease."),
    ray: Optional[str] = typer.Option(
        None, "--ray", help="Run the workers' rollouts on this Ray cluster (e.g. auto or ray://HOST:10001)."
    ),
    poll: float = typer.Option(
        1.0,
        "--poll",
        help="Seconds between idle workers' looks at the queue (they are also woken when work is queued).",
    ),
    max_push_mb: float = typer.Option(
        32.0, "--max-push-mb", help="The largest push (env file and data files, base64) in MiB; larger is refused."
    ),
) -> None:
    """Start the platform: HTTP API, database (migrated on start) and workers; pages at /envs, /runs, /jobs."""
    if poll <= 0:
        fail(f"--poll must be a positive number of seconds, got {poll}")
    if not 0 < max_push_mb <= 4096:
        fail(f"--max-push-mb must be a number of MiB from 0 to 4096, got {max_push_mb}")
    from . import server

    typer.echo(f"platform on http://{host}:{port} (data {data}); pages need ?key=rk_... once; Ctrl-C stops")
    server.serve(
        data,
        database=database,
        host=host,
        port=port,
        workers=workers,
        lease=lease,
        ray=ray,
        poll=poll,
        max_push=int(max_push_mb * (1 << 20)),
    )


@platform_app.command("migrate")
def migrate_command(
    data: Path = typer.Option(..., "--data", help="The platform's data folder."),
    database: Optional[str] = typer.Option(None, "--database", help="The platform's database URL, if not SQLite."),
) -> None:
    """Bring the database up to the newest migration and exit (``serve`` does it too; ``alembic`` can as well)."""
    from rolloutgym.platform.errors import PlatformError

    from . import db

    try:
        db.open_database(data, database).kw["bind"].dispose()
    except PlatformError as exc:
        fail(str(exc))
    typer.echo(f"database of {data} is at the newest migration ({db.head_revision()})")


@keys_app.command("create")
def keys_create_command(
    name: str = typer.Option(..., "--name", help="A name to tell the key apart."),
    scope: str = typer.Option("run,push,train", "--scope", help="Comma-separated scopes: run, push, train."),
    org: str = typer.Option("default", "--org", help="The organisation the key belongs to (sees only its own)."),
    data: Path = typer.Option(..., "--data", help="The platform's data folder."),
    database: Optional[str] = typer.Option(None, "--database", help="The platform's database URL, if not SQLite."),
) -> None:
    """Mint an API key (stored hashed; printed once)."""
    from rolloutgym.platform.errors import PlatformError

    from . import db

    try:
        key = db.create_key(db.open_database(data, database), name=name, scopes=db.parse_scopes(scope), org=org)
    except PlatformError as exc:
        fail(str(exc))
    typer.echo(key)
    typer.echo(f"key {name!r} for org {org!r} with scopes {scope}; it is shown only this once", err=True)
