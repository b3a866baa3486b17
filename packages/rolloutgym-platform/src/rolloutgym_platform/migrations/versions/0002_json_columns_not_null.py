"""The JSON columns the models declare NOT NULL and 0001 left nullable: env_versions.files, runs.options,
jobs.options. The code always writes them (``[]`` / ``{}`` by default); a NULL left by a hand-made row
becomes that empty value first, so the migration cannot fail on old data.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

COLUMNS = (("env_versions", "files", "[]"), ("runs", "options", "{}"), ("jobs", "options", "{}"))


def upgrade() -> None:
    for table, column, empty in COLUMNS:
        op.execute(f"UPDATE {table} SET {column} = '{empty}' WHERE {column} IS NULL")
        with op.batch_alter_table(table) as batch:
            batch.alter_column(column, existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    for table, column, _empty in COLUMNS:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(column, existing_type=sa.JSON(), nullable=True)
