"""The platform's database: engine (SQLite in DIR by default, or PostgreSQL), migrations, keys, the queue.

SQLite runs in WAL mode with a busy timeout, so the API process and the worker processes
can share it; a queue claim is one ``UPDATE ... RETURNING`` whose condition re-checks that the row is
still claimable (one row changes hands only once), which works the same on PostgreSQL.

The hot path (the claim, the lease's renewal, the end of a run, the API's read of a run) is one
statement each, on :func:`autocommit` connections: on PostgreSQL each is then a single round trip
to the server, with no ``BEGIN``/``COMMIT`` around it. Pooled connections are pinged only after
:data:`PING_AFTER` idle seconds (not at every checkout: that was one round trip more per statement);
a connection the server dropped meanwhile fails once and the pool is then renewed.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym.platform.errors import PlatformError
from sqlalchemy import Engine, create_engine, event, exc, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

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
        engine = create_engine(url, pool_size=10, max_overflow=30)
    except ModuleNotFoundError as error:
        raise PlatformError(
            f"the database driver {error.name} is missing; install it with {pip_install('rolloutgym-platform')}"
        ) from None
    event.listen(engine, "checkin", _stamp_idle)
    event.listen(engine, "checkout", functools.partial(_ping_if_idle, engine.dialect))
    return engine


PING_AFTER = 10.0  # seconds idle in the pool after which a connection is pinged before it is handed out


def _stamp_idle(_dbapi_connection: Any, record: Any) -> None:
    record.info["idle_since"] = time.monotonic()


def _ping_if_idle(dialect: Any, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A connection back from the pool: pinged (one round trip) only when it sat there over ``PING_AFTER`` s;
    a failed ping makes the pool open a fresh one (``DisconnectionError``), as ``pool_pre_ping`` would."""
    if getattr(dbapi_connection, "closed", False):
        raise exc.DisconnectionError("the connection was closed")
    if time.monotonic() - record.info.get("idle_since", time.monotonic()) > PING_AFTER:
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:  # noqa: BLE001 - any failure of the ping: the connection is dropped
            raise exc.DisconnectionError(str(error)) from error


@functools.cache
def autocommit(engine: Engine) -> Engine:
    """``engine`` with connections that commit each statement (sharing its pool): for one-statement work."""
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def migrate(engine: Engine) -> None:
    """Bring the schema up to the newest Alembic revision (the migrations ship inside the package)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def head_revision() -> str:
    """The newest migration's revision id (what ``alembic heads`` prints)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS)).get_current_head() or "base"


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
) -> tuple[Any, str | None] | None:
    """Take the oldest queued (or lease-expired running) row of ``model`` for ``owner``: ``(claimed, previous)``,
    the row as claimed and the ``path`` it had before this claim (None on its first attempt); None when none is
    queued.

    ``values(model)`` gives more columns to set in the same update, as SQL expressions of the row (a run's
    run-file path on its first attempt), so a claimed row needs no second write before its work starts. One
    statement, ``UPDATE ... WHERE id = (the oldest claimable row, FOR UPDATE SKIP LOCKED on PostgreSQL) AND
    claimable ... RETURNING``: the row changes hands only if it is still claimable when it is updated, so two
    workers never hold the same row; committed on its own (one round trip on PostgreSQL).
    """
    now = utcnow()
    claimable = or_(model.state == "queued", (model.state == "running") & (model.lease_until < now))
    oldest = (
        select(model.id).where(claimable).order_by(model.created_at).limit(1).with_for_update(skip_locked=True)
    ).scalar_subquery()
    statement = (
        update(model)
        .where(model.id == oldest, claimable)
        .values(
            state="running",
            lease_owner=owner,
            lease_until=now + datetime.timedelta(seconds=lease_seconds),
            attempts=model.attempts + 1,
            **(values(model) if values is not None else {}),
        )
        .returning(*model.__table__.columns)
    )
    with autocommit(sessions.kw["bind"]).connect() as connection:
        row = connection.execute(statement).first()
    if row is None:
        return None
    claimed = model(**row._asdict())
    return claimed, (claimed.path if claimed.attempts > 1 and hasattr(model, "path") else None)


def _one_statement(sessions: sessionmaker[Session], statement: Any) -> int:
    """Execute ``statement`` on its own (committed with it); the number of rows it changed."""
    with autocommit(sessions.kw["bind"]).connect() as connection:
        return connection.execute(statement).rowcount


def renew(
    sessions: sessionmaker[Session], model: Any, row_id: str, owner: str, lease_seconds: float, **values: Any
) -> bool:
    """Extend ``owner``'s lease on the row (and set ``values``); False when the lease was lost."""
    statement = (
        update(model)
        .where(model.id == row_id, model.lease_owner == owner, model.state == "running")
        .values(lease_until=utcnow() + datetime.timedelta(seconds=lease_seconds), **values)
    )
    return _one_statement(sessions, statement) == 1


def finish(sessions: sessionmaker[Session], model: Any, row_id: str, owner: str, state: str, **values: Any) -> bool:
    """End ``owner``'s work on the row; False (and nothing written) when another worker holds it now."""
    statement = (
        update(model)
        .where(model.id == row_id, model.lease_owner == owner, model.state == "running")
        .values(state=state, lease_until=None, finished_at=utcnow(), **values)
    )
    return _one_statement(sessions, statement) == 1
