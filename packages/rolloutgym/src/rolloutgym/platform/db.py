"""The platform's database: engine (SQLite in DIR by default, or PostgreSQL), migrations, keys, the queue.

SQLite runs in WAL mode with a busy timeout, so the API process and the worker processes
can share it; queue claims are compare-and-set updates (one row changes hands only if it is
still claimable), which works the same on PostgreSQL.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from ..install_hints import pip_install
from .errors import PlatformError
from .models import ApiKey, Job, RunRow, utcnow

SCOPES = ("run", "push", "train")
MIGRATIONS = Path(__file__).parent / "migrations"


def database_url(data: str | Path, database: str | None = None) -> str:
    """The SQLAlchemy URL: ``database`` as given, else SQLite at ``DATA/platform.db``."""
    if database:
        if database.startswith("postgresql://"):
            return "postgresql+psycopg://" + database.removeprefix("postgresql://")
        return database
    return f"sqlite:///{Path(data).resolve() / 'platform.db'}"


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL mode and a 60 s busy timeout on every connection (opened lazily)."""
    # As many pooled connections as the API's thread pool has threads (anyio's default: 40), so a burst of
    # requests never waits for a connection.
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": 60, "check_same_thread": False}, pool_size=40, max_overflow=10
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=30)
    except ModuleNotFoundError as exc:
        raise PlatformError(
            f"the database driver {exc.name} is missing; install it with {pip_install('rolloutgym', 'platform')}"
        ) from None


def migrate(engine: Engine) -> None:
    """Bring the schema up to the newest Alembic revision (the migrations ship inside the package)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def open_database(data: str | Path, database: str | None = None) -> sessionmaker[Session]:
    """Create DATA, migrate the database, and return a session factory."""
    Path(data).mkdir(parents=True, exist_ok=True)
    engine = make_engine(database_url(data, database))
    migrate(engine)
    return sessionmaker(engine, expire_on_commit=False)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_scopes(text: str) -> list[str]:
    scopes = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [scope for scope in scopes if scope not in SCOPES]
    if unknown or not scopes:
        raise PlatformError(f"unknown scope {', '.join(unknown) or '(none)'}; choose from {','.join(SCOPES)}")
    return scopes


def create_key(sessions: sessionmaker[Session], *, name: str, scopes: list[str], org: str = "default") -> str:
    """Mint an API key; only its sha256 is stored, so the returned key is shown once."""
    key = "rk_" + secrets.token_urlsafe(32)
    with sessions.begin() as session:
        session.add(ApiKey(name=name, org=org, key_hash=hash_key(key), prefix=key[:8], scopes=",".join(scopes)))
    return key


def find_key(session: Session, key: str) -> ApiKey | None:
    return session.scalars(select(ApiKey).where(ApiKey.key_hash == hash_key(key))).first()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


def claim(
    sessions: sessionmaker[Session],
    model: type[RunRow] | type[Job],
    owner: str,
    lease_seconds: float,
    values: Callable[[Any], dict[str, Any]] | None = None,
) -> tuple[Any, Any] | None:
    """Take the oldest queued (or lease-expired running) row of ``model`` for ``owner``: ``(claimed, before)``,
    the row as claimed and as it was before (its previous attempt's ``path``, say); None when none is queued.

    ``values(before)`` gives more columns to set in the same update (a run's new run-file path), so a
    claimed row needs no second write before its work starts. A compare-and-set update: the row
    changes hands only if it is still claimable and its attempt count is still the one read, so
    two workers never hold the same row. The update returns the claimed row (``RETURNING``:
    SQLite 3.35+, PostgreSQL), so a claim is one transaction.
    """
    for _attempt in range(20):
        now = utcnow()
        claimable = or_(model.state == "queued", (model.state == "running") & (model.lease_until < now))
        with sessions.begin() as session:
            before = session.execute(
                select(model.__table__).where(claimable).order_by(model.created_at).limit(1)
            ).first()
            if before is None:
                return None
            claimed = session.scalars(
                update(model)
                .where(model.id == before.id, model.attempts == before.attempts, claimable)
                .values(
                    state="running",
                    lease_owner=owner,
                    lease_until=now + datetime.timedelta(seconds=lease_seconds),
                    attempts=before.attempts + 1,
                    **(values(before) if values is not None else {}),
                )
                .returning(model)
            ).first()
        if claimed is not None:
            return claimed, before
    return None


def renew(
    sessions: sessionmaker[Session], model: Any, row_id: str, owner: str, lease_seconds: float, **values: Any
) -> bool:
    """Extend ``owner``'s lease on the row (and set ``values``); False when the lease was lost."""
    with sessions.begin() as session:
        changed = session.execute(
            update(model)
            .where(model.id == row_id, model.lease_owner == owner, model.state == "running")
            .values(lease_until=utcnow() + datetime.timedelta(seconds=lease_seconds), **values)
        ).rowcount
    return changed == 1


def finish(sessions: sessionmaker[Session], model: Any, row_id: str, owner: str, state: str, **values: Any) -> bool:
    """End ``owner``'s work on the row; False (and nothing written) when another worker holds it now."""
    with sessions.begin() as session:
        changed = session.execute(
            update(model)
            .where(model.id == row_id, model.lease_owner == owner, model.state == "running")
            .values(state=state, lease_until=None, finished_at=utcnow(), **values)
        ).rowcount
    return changed == 1
