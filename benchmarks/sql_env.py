"""SQL environments: per-episode isolation cost and ``run_sql`` step overhead, each against a baseline.

1. Isolation: opening an episode's private copy of a 10 MB SQLite database file (target
   <= 5 ms). Baseline in the same run: the naive copy, ``sqlite3.connect(file)`` + the backup
   API into a new in-memory database. rolloutgym reads the file once (read-only) and then
   deserializes the cached image per episode. DuckDB's cost is printed for information.
2. ``run_sql`` throughput: one ``env.step(run_sql)`` per statement against raw ``sqlite3``
   executing the same statements on an in-memory copy and fetching the same rows (target
   overhead <= 1.2x), for the shop questions' gold queries (the realistic load) and for point
   lookups (the worst case: the per-call work is all overhead). The env adds tool-call
   validation, the round trip to the episode's limits worker (the statement runs there, under
   the authorizer, the progress handler and the memory cap) and rendering the table. Both
   sides are timed in interleaved passes and the best pass of each is kept, so that a loaded
   machine hits both alike (``cat /proc/loadavg`` next to the figures).

Run: ``python benchmarks/sql_env.py`` (``--repeats`` for more samples).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from rolloutgym_sql import Limits, SqlEnv, SqliteFileSource, SqlTask, shop_tasks
from rolloutgym_sql._backends import open_session
from rolloutgym_sql.shop import shop_source


def make_database(path: Path, megabytes: int = 10) -> None:
    """A SQLite file of about ``megabytes`` MB: one table of events with text and numbers."""
    generator = random.Random(7)
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE events (event_id INTEGER PRIMARY KEY, user_id INTEGER, kind TEXT, amount REAL, note TEXT)"
    )
    rows_needed = megabytes * 1024 * 1024 // 110
    connection.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
        (
            (
                index,
                generator.randint(1, 5000),
                generator.choice(("view", "click", "buy")),
                round(generator.random() * 100, 2),
                "x" * 70,
            )
            for index in range(rows_needed)
        ),
    )
    connection.commit()
    connection.close()


def per_call_ms(function: object, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()  # type: ignore[operator]
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def isolation(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.sqlite"
        make_database(path)
        size_mb = path.stat().st_size / 1e6
        source = SqliteFileSource(str(path))
        limits = Limits()
        open_session("sqlite", source, read_only=True, limits=limits).close()  # first read of the file

        def episode_copy() -> None:
            open_session("sqlite", source, read_only=False, limits=limits).close()

        def naive_copy() -> None:
            original = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            copy = sqlite3.connect(":memory:")
            original.backup(copy)
            original.close()
            copy.close()

        ours = per_call_ms(episode_copy, repeats)
        naive = per_call_ms(naive_copy, repeats)
        print(f"isolation, {size_mb:.1f} MB SQLite file (median of {repeats}):")
        print(f"  rolloutgym episode copy (cached image + deserialize): {ours:7.2f} ms   (target <= 5 ms)")
        print(f"  baseline: connect(file) + backup API into memory   : {naive:7.2f} ms")
        print(f"  ratio rolloutgym / baseline                         : {ours / naive:7.2f}x")
        try:
            import duckdb  # noqa: F401
        except ImportError:
            print("  duckdb: not installed (pip install 'rolloutgym-sql[duckdb]')")
            return
        open_session("duckdb", source, read_only=False, limits=limits).close()
        duck = per_call_ms(
            lambda: open_session("duckdb", source, read_only=False, limits=limits).close(), max(3, repeats // 20)
        )
        print(f"  duckdb episode copy (new instance + Arrow bulk load): {duck:7.2f} ms   (information)")


def step_overhead(repeats: int, label: str, statements: list[str], floor_us: float) -> None:
    limits = Limits()
    task = SqlTask("bench", "benchmark", gold_sql=("SELECT 1",))
    environment = SqlEnv(task, source=shop_source(), limits=limits)
    environment.reset(seed=0)
    actions = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{index}", "name": "run_sql", "arguments": {"sql": sql}}],
        }
        for index, sql in enumerate(statements)
    ]
    raw = sqlite3.connect(":memory:")
    raw.deserialize(shop_source().sqlite_image())

    def through_env() -> None:
        for action in actions:
            environment.step(action)

    def through_sqlite() -> None:
        for sql in statements:
            cursor = raw.execute(sql)
            cursor.fetchmany(limits.display_rows + 1)
            cursor.close()

    env_samples, raw_samples = [], []
    for _ in range(repeats):  # interleaved, so load on the machine hits both alike
        env_samples.append(per_call_ms(through_env, 1))
        raw_samples.append(per_call_ms(through_sqlite, 1))
    env_ms, raw_ms = min(env_samples), min(raw_samples)
    environment.close()
    raw.close()
    count = len(statements)
    print(f"run_sql steps, {label}: {count} statements per pass (best of {repeats}, interleaved):")
    print(f"  env.step(run_sql)      : {env_ms:8.2f} ms per pass  ({count / env_ms * 1000:8.1f} statements/s)")
    print(f"  raw sqlite3 execute    : {raw_ms:8.2f} ms per pass  ({count / raw_ms * 1000:8.1f} statements/s)")
    print(f"  overhead env / raw     : {env_ms / raw_ms:8.2f}x   (target <= 1.2x)")
    added = (env_ms - raw_ms) * 1000 / count
    print(f"  added per statement    : {added:8.1f} µs = the pipe floor {floor_us:.1f} µs + {added - floor_us:.1f} µs")


def pipe_round_trip_us(repeats: int, count: int = 200) -> float:
    """µs of one bare round trip (a byte each way over pipes) to a child process: this machine's floor.

    Every agent statement crosses to the episode's limits worker and back once; this is that
    hand-over with nothing else in it (two process wake-ups), measured in the same run.
    """
    import os
    import subprocess
    import sys

    echo = "import os\nwhile True:\n    byte = os.read(0, 1)\n    if not byte:\n        break\n    os.write(1, byte)\n"
    child = subprocess.Popen([sys.executable, "-c", echo], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    send, receive = child.stdin.fileno(), child.stdout.fileno()

    def ping_pong() -> None:
        for _ in range(count):
            os.write(send, b"x")
            os.read(receive, 1)

    try:
        return per_call_ms(ping_pong, repeats) * 1000 / count
    finally:
        child.stdin.close()
        child.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    arguments = parser.parse_args()
    isolation(arguments.repeats)
    passes = max(5, arguments.repeats // 2)
    floor = pipe_round_trip_us(passes)
    print(f"a bare pipe round trip to a child process (the floor of a statement's hand-over): {floor:.1f} µs")
    step_overhead(passes, "the shop questions' gold queries", [task.gold_sql[0] for task in shop_tasks()], floor)
    lookups = [f"SELECT * FROM orders WHERE order_id = {index * 7 + 1}" for index in range(200)]
    step_overhead(passes, "point lookups (worst case: tiny queries)", lookups, floor)


if __name__ == "__main__":
    main()
