"""The platform's database tables (SQLAlchemy 2.x declarative models).

The schema itself is created by the Alembic migrations in ``migrations/``; these classes
are how the code reads and writes it. Every row that a key can see carries ``org``: a key
only ever sees its own organisation's rows (another's answer 404).
"""

from __future__ import annotations

import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    org: Mapped[str] = mapped_column(String(200), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the key; the key is never stored
    prefix: Mapped[str] = mapped_column(String(16))  # the first characters, to tell keys apart in listings
    scopes: Mapped[str] = mapped_column(String(200))  # comma-separated: run,push,train
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime, default=utcnow)


class EnvVersion(Base):
    """One pushed version of an env: the content hash of its files, stored under DIR/envs."""

    __tablename__ = "env_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org: Mapped[str] = mapped_column(String(200), index=True)
    slug: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))  # "python", "json" or "id" (a registered env id)
    entry: Mapped[str] = mapped_column(Text)  # the env file's path (relative to DIR) or the registered id
    files: Mapped[Any] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime, default=utcnow)


class _Work:
    """Columns of queued work (runs and jobs): its state and the lease of the worker that holds it."""

    state: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_until: Mapped[datetime.datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime, default=utcnow, index=True)
    finished_at: Mapped[datetime.datetime | None] = mapped_column(DateTime, nullable=True)


class RunRow(_Work, Base):
    """A run's row in the ``runs`` table (its state, lease, counters); the rollouts are in its run file
    (read back as :class:`rolloutgym.runs.Run`)."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    org: Mapped[str] = mapped_column(String(200), index=True)
    env_slug: Mapped[str] = mapped_column(String(200))
    env_version_id: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(Text)
    n: Mapped[int] = mapped_column(Integer, default=1)
    options: Mapped[Any] = mapped_column(JSON, default=dict)  # limit, seed, split, tasks, max_steps, ...
    path: Mapped[str | None] = mapped_column(Text, nullable=True)  # the run file, relative to DIR
    total: Mapped[int | None] = mapped_column(Integer, nullable=True)  # task groups to run
    done: Mapped[int] = mapped_column(Integer, default=0)
    passes: Mapped[int] = mapped_column(Integer, default=0)
    trajectories: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    pass_rate: Mapped[float | None] = mapped_column(Float, nullable=True)


class Job(_Work, Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    org: Mapped[str] = mapped_column(String(200), index=True)
    source_run_id: Mapped[str] = mapped_column(String(40))
    method: Mapped[str] = mapped_column(String(16))
    base_model: Mapped[str] = mapped_column(Text)
    suffix: Mapped[str | None] = mapped_column(String(100), nullable=True)
    rollout_ids: Mapped[Any] = mapped_column(JSON, nullable=True)
    options: Mapped[Any] = mapped_column(JSON, default=dict)  # steps, learning_rate, ...
    model_path: Mapped[str | None] = mapped_column(Text, nullable=True)  # the trained model, relative to DIR
    log_path: Mapped[str | None] = mapped_column(Text, nullable=True)  # the training log, relative to DIR
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
