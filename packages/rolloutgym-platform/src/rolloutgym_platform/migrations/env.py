"""Alembic environment of the platform, for both ways of migrating.

* :func:`rolloutgym_platform.db.migrate` (``platform serve``, ``platform migrate``) passes its own connection
  (``config.attributes["connection"]``).
* The stock CLI opens one: ``alembic -c ALEMBIC_INI -x database=URL upgrade head`` (``ALEMBIC_INI`` is
  :data:`rolloutgym_platform.migrations.ALEMBIC_INI`); the URL is ``-x database=URL``, else the
  ``ROLLOUTGYM_DATABASE_URL`` environment variable, else ``-x data=FOLDER`` (SQLite in that data folder, as
  ``platform serve --data FOLDER`` uses it). ``alembic ... check`` compares the models with the migrations.
"""

from alembic import context

from rolloutgym_platform.migrations import database_from_cli
from rolloutgym_platform.models import Base

OPTIONS = {"target_metadata": Base.metadata, "render_as_batch": True}

connection = context.config.attributes.get("connection")
if connection is not None:
    context.configure(connection=connection, **OPTIONS)
    with context.begin_transaction():
        context.run_migrations()
elif context.is_offline_mode():  # alembic upgrade head --sql: the SQL, printed
    context.configure(url=database_from_cli(context.get_x_argument(as_dictionary=True)), **OPTIONS)
    with context.begin_transaction():
        context.run_migrations()
else:
    from rolloutgym_platform.db import make_engine

    engine = make_engine(database_from_cli(context.get_x_argument(as_dictionary=True)))
    try:
        with engine.begin() as opened:
            context.configure(connection=opened, **OPTIONS)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()
