"""The platform's Alembic migrations (``versions/``) and the configuration of the stock ``alembic`` CLI.

A deploy that migrates before it starts the platform runs::

    alembic -c "$(python -c 'import rolloutgym_platform.migrations as m; print(m.ALEMBIC_INI)')" \\
        -x database=postgresql://user@host/db upgrade head
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ALEMBIC_INI", "DATABASE_ENV", "database_from_cli"]

ALEMBIC_INI = Path(__file__).with_name("alembic.ini")
DATABASE_ENV = "ROLLOUTGYM_DATABASE_URL"


def database_from_cli(x_arguments: dict[str, str]) -> str:
    """The SQLAlchemy URL for the stock CLI: ``-x database=URL``, else ``$ROLLOUTGYM_DATABASE_URL``, else SQLite in
    ``-x data=FOLDER``; a one-line error naming the three ways when none is given."""
    from alembic.util import CommandError

    from ..db import database_url

    database = x_arguments.get("database") or os.environ.get(DATABASE_ENV)
    data = x_arguments.get("data")
    if not database and not data:
        raise CommandError(
            f"which database? give alembic -x database=URL (or set {DATABASE_ENV}), or -x data=FOLDER for the "
            "SQLite file of 'rolloutgym platform serve --data FOLDER'"
        )
    if not database:
        Path(data).mkdir(parents=True, exist_ok=True)  # as 'platform serve --data' makes it
    return database_url(data or ".", database)
