"""Where an environment's database comes from: DDL + seed SQL, a SQLite file, or a generator.

Every source is turned once per process into a SQLite *image* (the bytes of an in-memory
database, via ``Connection.serialize``); each episode then deserializes the image into its
own in-memory connection, so episodes never share state and the source is never written.
A source file is opened with ``mode=ro`` and copied with the SQLite backup API.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rolloutgym_protocol.errors import ConfigError, EnvFileError

__all__ = ["DatabaseSource", "GeneratedSource", "SqliteFileSource", "SqlScriptSource"]

_IMAGES: dict[str, bytes] = {}
_LOCK = threading.Lock()


class DatabaseSource:
    """Base class: something that can build the initial database of an episode."""

    #: A stable identity of the content (used to cache images and expected results).
    key: str = ""

    def build(self, connection: sqlite3.Connection) -> None:
        """Fill an empty in-memory SQLite connection with the initial database."""
        raise NotImplementedError

    def sqlite_image(self) -> bytes:
        """The serialized initial database (built once per process, then cached)."""
        key = self.cache_key()
        with _LOCK:
            image = _IMAGES.get(key)
        if image is not None:
            return image
        connection = sqlite3.connect(":memory:", isolation_level=None)
        try:
            self.build(connection)
            image = connection.serialize()
        finally:
            connection.close()
        with _LOCK:
            _IMAGES[key] = image
        return image

    def cache_key(self) -> str:
        return self.key

    def describe(self) -> str:
        return self.key


@dataclass(frozen=True)
class SqlScriptSource(DatabaseSource):
    """A database made by running ``schema`` (DDL) and then ``seed`` (INSERT statements).

    This is the SDK ``sql`` template's shape: ``Environment(schema=DDL, seed=INSERTS)``.
    """

    schema: str
    seed: str | None = None
    name: str = "env"

    @property
    def key(self) -> str:  # type: ignore[override]
        digest = hashlib.sha256(self.schema.encode("utf-8", "surrogatepass"))
        digest.update(b"\0" + (self.seed or "").encode("utf-8", "surrogatepass"))
        return f"script:{digest.hexdigest()[:24]}"

    def build(self, connection: sqlite3.Connection) -> None:
        for label, script in (("schema", self.schema), ("seed", self.seed)):
            if not script:
                continue
            try:
                connection.executescript(script)
            except (sqlite3.Error, UnicodeError) as exc:
                raise EnvFileError(
                    f"sql environment {self.name!r}: its {label} SQL does not run on SQLite: {exc}. "
                    f"Fix the {label} (it must be valid SQLite {'DDL' if label == 'schema' else 'INSERT statements'})."
                ) from None


@dataclass(frozen=True)
class SqliteFileSource(DatabaseSource):
    """An existing SQLite database file, opened read-only and copied into memory.

    The file is never opened writable; a changed file (size or modification time) is
    re-read on the next episode.
    """

    path: str

    @property
    def key(self) -> str:  # type: ignore[override]
        return f"file:{os.path.abspath(self.path)}"

    def cache_key(self) -> str:
        try:
            status = os.stat(self.path)
        except OSError as exc:
            raise ConfigError(
                f"SQLite database {self.path!r} cannot be read: {exc.strerror}. Check the path."
            ) from None
        return f"{self.key}:{status.st_size}:{status.st_mtime_ns}"

    def build(self, connection: sqlite3.Connection) -> None:
        path = Path(self.path).resolve()
        if not path.is_file():
            raise ConfigError(f"SQLite database {str(path)!r} does not exist. Check the path.")
        uri = f"{path.as_uri()}?mode=ro"
        try:
            source = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open SQLite database {str(path)!r} read-only: {exc}") from None
        try:
            source.backup(connection)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{str(path)!r} is not a readable SQLite database: {exc}") from None
        finally:
            source.close()


@dataclass(frozen=True)
class GeneratedSource(DatabaseSource):
    """A database produced by a deterministic generator ``build(connection)`` in a package."""

    name: str
    builder: Callable[[sqlite3.Connection], None] = field(compare=False)

    @property
    def key(self) -> str:  # type: ignore[override]
        return f"generated:{self.name}"

    def build(self, connection: sqlite3.Connection) -> None:
        self.builder(connection)
