"""``rolloutgym serve``: serve environments over HTTP/WebSocket (and MCP)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from ..install_hints import pip_install
from ._app import app, error_console, fail, parse_key_values


@app.command("serve")
def serve_command(
    envs: Optional[list[str]] = typer.Argument(
        None, help="Env ids or env files to serve (default: every registered env)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; anything but loopback needs --token."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    tokens: Optional[list[str]] = typer.Option(
        None,
        "--token",
        help="Bearer token clients must send (default: $ROLLOUTGYM_SERVE_TOKEN); repeat for one token per "
        "client or team: sessions belong to the token that opened them.",
    ),
    max_sessions: int = typer.Option(1024, "--max-sessions", help="Open sessions at most; one more gets HTTP 429."),
    max_sessions_per_owner: Optional[int] = typer.Option(
        None,
        "--max-sessions-per-owner",
        help="Open sessions one client (token and client key) may hold; one more gets HTTP 429 "
        "(default: half of --max-sessions).",
    ),
    idle_timeout: float = typer.Option(
        300.0, "--idle-timeout", help="Close a session after this many seconds without calls (0: never)."
    ),
    max_body_bytes: int = typer.Option(
        8 * 1024 * 1024, "--max-body-bytes", help="Largest request body or WebSocket message (413 beyond)."
    ),
    env_args: Optional[list[str]] = typer.Option(
        None, "--env-arg", help="KEY=VALUE passed to every served env's factory (repeatable)."
    ),
    allow_env_kwargs: bool = typer.Option(
        False, "--allow-env-kwargs", help="Let clients pass env factory keyword arguments."
    ),
    hide_task_items: bool = typer.Option(
        False,
        "--hide-task-items",
        help="Keep task data on the server: task lists without items, no oracle_action, info reduced to "
        "score numbers, env error messages withheld.",
    ),
    log_level: str = typer.Option("info", "--log-level", help="debug, info, warning or error (JSON lines on stderr)."),
) -> None:
    """Serve environments: sessions over HTTP/WebSocket, OpenEnv and MCP endpoints."""
    try:
        from ..serve import ServeConfig, serve
    except ImportError as exc:
        fail(f"rolloutgym serve needs the server stack: {pip_install('rolloutgym', 'serve')} ({exc})")
    missing = missing_serve_modules()
    if missing:  # e.g. only rolloutgym-platform: starlette and uvicorn are there, the rest is not
        fail(
            f"rolloutgym serve needs the server stack ({', '.join(missing)} missing): "
            + pip_install("rolloutgym", "serve")
        )
    if max_sessions < 1:
        fail(f"--max-sessions must be at least 1, got {max_sessions}")
    if max_sessions_per_owner is not None and max_sessions_per_owner < 1:
        fail(f"--max-sessions-per-owner must be at least 1, got {max_sessions_per_owner}")
    if idle_timeout < 0:
        fail(f"--idle-timeout must be non-negative, got {idle_timeout}")
    config = ServeConfig(
        list(envs or []),
        token=list(tokens or ()) or os.environ.get("ROLLOUTGYM_SERVE_TOKEN") or None,
        max_sessions=max_sessions,
        max_sessions_per_owner=max_sessions_per_owner,
        idle_timeout=idle_timeout or None,
        max_body_bytes=max_body_bytes,
        allow_env_kwargs=allow_env_kwargs,
        expose_task_items=not hide_task_items,
        env_kwargs=parse_key_values(env_args, "--env-arg"),
    )
    check_port(host, port)  # a port in use is said before "serving on", not after it
    error_console.print(
        f"serving {', '.join(config.envs) or 'every registered env'} on http://{host}:{port} (Ctrl-C stops)"
    )
    serve(config, host=host, port=port, log_level=log_level)


# The modules of the ``serve`` extra that rolloutgym-platform does not bring.
SERVE_MODULES = ("starlette", "uvicorn", "websockets", "mcp", "orjson")


def missing_serve_modules() -> list[str]:
    import importlib.util

    return [name for name in SERVE_MODULES if importlib.util.find_spec(name) is None]


def check_port(host: str, port: int) -> None:
    """A one-line error when ``host:port`` cannot be bound (in use, or not an address of this machine)."""
    import socket

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc} (another process, e.g. an earlier "
             "'rolloutgym serve', may hold the port: pass --port N)")  # fmt: skip
