"""The platform's hook implementations: it adds the ``rolloutgym platform`` command group (and nothing else:
no envs, no policies). Importing this module is cheap: the commands load the server when they run."""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import hookimpl


@hookimpl
def rolloutgym_commands(cli: Any) -> None:
    """Add ``rolloutgym platform serve|migrate|keys create``."""
    from .cli import register

    register(cli)
