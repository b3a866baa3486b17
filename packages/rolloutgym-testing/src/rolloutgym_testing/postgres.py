"""A private PostgreSQL cluster on 127.0.0.1 for tests and benchmarks (Debian's ``postgresql`` package).

.. code-block:: python

    from rolloutgym_testing.postgres import PostgresCluster

    with PostgresCluster.start(tmp_path / "postgres") as cluster:
        url = cluster.new_database()  # postgresql://postgres@127.0.0.1:PORT/platform_...

The cluster is made with ``initdb`` in a folder the caller owns, listens on a free port of
127.0.0.1 only (trust authentication, superuser ``postgres``), and runs without fsync (its
data is thrown away). Run as root, it runs as ``nobody`` (postgres refuses to run as root), and its
data folder is then a fresh ``tempfile.mkdtemp()`` of its own, removed by :meth:`PostgresCluster.stop`:
inside pytest's temp tree it would sit under ``/tmp/pytest-of-root`` (0700), which every pytest session
that starts sets back to 0700, locking ``nobody`` out of a running cluster (its checkpointer then panics).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresCluster", "postgres_binaries"]


def postgres_binaries() -> Path | None:
    """The folder holding initdb and postgres: on PATH, else Debian's /usr/lib/postgresql/N/bin (newest)."""
    found = shutil.which("initdb")
    candidates = [Path(found).resolve().parent] if found else []
    candidates += sorted(
        Path("/usr/lib/postgresql").glob("*/bin"), key=lambda path: int(path.parent.name), reverse=True
    )
    return next((folder for folder in candidates if (folder / "postgres").exists()), None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres_user() -> tuple[list[str], Path | None]:
    """The command prefix that runs PostgreSQL unprivileged, and the folder made for its data: postgres refuses to
    run as root, so a root process hands the cluster to ``nobody``, in a temp folder of its own owned by it."""
    if os.geteuid() != 0:
        return [], None
    home = Path(tempfile.mkdtemp(prefix="rolloutgym-postgres-"))
    os.chown(home, 65534, 65534)
    top = Path(tempfile.gettempdir()).resolve()
    parent = home.resolve().parent
    while parent.is_relative_to(top) and parent != top:  # a temp folder under a 0700 one: let nobody pass
        parent.chmod(parent.stat().st_mode | stat.S_IXOTH)
        parent = parent.parent
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"], home


@dataclass
class PostgresCluster:
    """A private PostgreSQL cluster on 127.0.0.1 (trust auth, superuser ``postgres``)."""

    port: int
    process: subprocess.Popen
    folder: Path
    created: int = 0
    home: Path | None = None  # the data folder made for ``nobody`` (root only), removed at stop()

    @classmethod
    def start(cls, folder: str | Path, *, timeout: float = 60.0) -> PostgresCluster:
        """``initdb`` a cluster in ``folder`` (made if missing) and start it on a free port; raises RuntimeError
        naming the fix when PostgreSQL is not installed, or the server's log when it does not start."""
        binaries = postgres_binaries()
        if binaries is None:
            raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql (Debian's package)")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        prefix, home = _as_postgres_user()
        data = (home or folder) / "cluster"
        initdb = [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-locale"]
        try:
            subprocess.run(prefix + initdb + ["-E", "UTF8"], check=True, capture_output=True, cwd=data.parent)
        except (OSError, subprocess.CalledProcessError):
            if home is not None:
                shutil.rmtree(home, ignore_errors=True)
            raise
        port = _free_port()
        settings = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        settings += ["-c", "max_connections=300", "-c", "shared_buffers=32MB", "-k", str(data.parent)]
        command = prefix + [str(binaries / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port)]
        with open(folder / "postgres.log", "w") as log:  # written by this process (the child's stdout)
            process = subprocess.Popen(command + settings, stdout=log, stderr=subprocess.STDOUT, cwd=data.parent)
        cluster = cls(port, process, folder, home=home)
        try:
            cluster._wait(timeout)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    @property
    def url(self) -> str:
        """The ``postgres`` maintenance database's URL."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _wait(self, timeout: float) -> None:
        import psycopg

        log = self.folder / "postgres.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {log.read_text()}")
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.2)
        raise RuntimeError(f"postgres did not start within {timeout:.0f} s: {log.read_text()}")

    def new_database(self) -> str:
        """Create a fresh database; its ``postgresql://`` URL."""
        import psycopg

        self.created += 1
        name = f"platform_{os.getpid()}_{self.created}"
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        """Stop the server (a fast shutdown; killed after 30 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
