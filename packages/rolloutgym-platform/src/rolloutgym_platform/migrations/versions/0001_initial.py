"""The first schema: keys, env versions, runs and jobs.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _work_columns() -> list[sa.Column]:
    return [
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("lease_owner", sa.String(100)),
        sa.Column("lease_until", sa.DateTime),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime),
    ]


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("org", sa.String(200), nullable=False, index=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("scopes", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "env_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("org", sa.String(200), nullable=False, index=True),
        sa.Column("slug", sa.String(200), nullable=False, index=True),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("files", sa.JSON),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("org", sa.String(200), nullable=False, index=True),
        sa.Column("env_slug", sa.String(200), nullable=False),
        sa.Column("env_version_id", sa.Integer, nullable=False),
        sa.Column("policy", sa.Text, nullable=False),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("options", sa.JSON),
        sa.Column("path", sa.Text),
        sa.Column("total", sa.Integer),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("passes", sa.Integer, nullable=False),
        sa.Column("trajectories", sa.Integer, nullable=False),
        sa.Column("errors", sa.Integer, nullable=False),
        sa.Column("pass_rate", sa.Float),
        *_work_columns(),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("org", sa.String(200), nullable=False, index=True),
        sa.Column("source_run_id", sa.String(40), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("base_model", sa.Text, nullable=False),
        sa.Column("suffix", sa.String(100)),
        sa.Column("rollout_ids", sa.JSON),
        sa.Column("options", sa.JSON),
        sa.Column("model_path", sa.Text),
        sa.Column("log_path", sa.Text),
        sa.Column("result", sa.JSON),
        *_work_columns(),
    )


def downgrade() -> None:
    for table in ("jobs", "runs", "env_versions", "api_keys"):
        op.drop_table(table)
