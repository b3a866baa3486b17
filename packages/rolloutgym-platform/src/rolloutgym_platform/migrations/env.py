"""Alembic environment of the platform: run by :func:`rolloutgym_platform.db.migrate` on its connection."""

from alembic import context

from rolloutgym_platform.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
