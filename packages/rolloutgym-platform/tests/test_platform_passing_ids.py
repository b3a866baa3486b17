"""``passing_rollout_ids`` on a run that has not finished, as the seed README calls it (right after ``create_run``):
one behaviour on SQLite and PostgreSQL, for ``Client`` and ``AsyncClient``. It waits for the run's end and answers
the whole list; at its timeout it raises "has not finished", never a partial list. The API itself refuses (409) a
queued or running run on both databases."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from rolloutgym import AsyncClient, Client
from rolloutgym.platform.errors import PlatformError

from .conftest import database_for, mint


@pytest.fixture(params=["sqlite", "postgresql"])
def slow_platform(request, servers, slow_plugin, tmp_path):
    """A platform whose env grades slowly (0.25 s a task): a run of 8 tasks is still running right after queuing."""
    data = tmp_path / "data"
    database = database_for(request)
    key = mint(data, "all", "run,push,train", "acme", database)
    server = servers.start(data, database, workers=1, env=slow_plugin)
    server.keys = {"all": key}
    yield server
    server.stop()


def test_passing_ids_right_after_create_run_wait_for_the_whole_list(slow_platform) -> None:
    with Client(slow_platform.url, slow_platform.keys["all"]) as client:
        client.push("slowtest/arith-v0")
        run = client.create_run(env_slug="slowtest/arith-v0", model="oracle", n=2, limit=8)
        raw = httpx.get(
            f"{slow_platform.url}/api/runs/{run['runId']}/passing",
            headers={"Authorization": f"Bearer {slow_platform.keys['all']}"},
        )
        assert raw.status_code == 409 and "has not finished" in raw.json()["error"], raw.text  # not [] nor partial
        with pytest.raises(PlatformError, match=r"has not finished after 0\.1 s \((queued|running), \d+/"):
            client.passing_rollout_ids(run["runId"], timeout=0.1)
        ids = client.passing_rollout_ids(run["runId"])  # the README's call: waits for the end
        assert client.get_run(run["runId"])["state"] == "succeeded"
        assert sorted(ids) == sorted(f"{task}:{member}" for task in range(8) for member in range(2))
        assert client.passing_rollout_ids(run["runId"]) == ids  # a finished run answers at once, the same
        assert client.passing_rollout_ids(run["runId"], threshold=1.5) == []

        async def asynchronous() -> tuple[list[str], list[str]]:
            async with AsyncClient(slow_platform.url, slow_platform.keys["all"]) as aclient:
                second = await aclient.create_run(env_slug="slowtest/arith-v0", model="null", n=1, limit=4)
                with pytest.raises(PlatformError, match="has not finished"):
                    await aclient.passing_rollout_ids(second["runId"], timeout=0.05)
                third = await aclient.create_run(env_slug="slowtest/arith-v0", model="oracle", n=1, limit=4)
                return await aclient.passing_rollout_ids(second["runId"]), await aclient.passing_rollout_ids(
                    third["runId"]
                )

        nothing, everything = asyncio.run(asynchronous())
        assert nothing == [] and sorted(everything) == ["0:0", "1:0", "2:0", "3:0"]
