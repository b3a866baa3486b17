"""OpenEnv's usual loop against ``rolloutgym serve``: which task a reset plays, the token, the schema (issue 45).

A real server process on a loopback port, spoken to with OpenEnv's wire messages over a
real WebSocket exactly as ``openenv-core`` 0.3.0's ``EnvClient`` sends them (``connect(URL
+ "/ws")``, ``{"type": "reset" | "step", "data": ...}``). openenv-core itself cannot share
an environment with ``rolloutgym[serve]`` (it pins ``mcp<2`` through fastmcp, the server
needs ``mcp>=2``); docs/how-to/serve-envs.md says to run it in its own environment.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest
from rolloutgym.registry import get_registry
from rolloutgym.serve import ServerProcess
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

ARITH = "toy/arith-v0"
GUESS = "toy/guess-v0"
SQL = "sql/shop-v0"


def _ask(connection: Any, message: dict[str, Any]) -> dict[str, Any]:
    connection.send(json.dumps(message))
    return json.loads(connection.recv())


@pytest.fixture(scope="module")
def server() -> ServerProcess:
    with ServerProcess([ARITH, GUESS, SQL]) as process:
        yield process


def test_reset_without_a_task_plays_the_next_task(server: ServerProcess) -> None:
    tasks = httpx.get(f"{server.base_url}/envs/{ARITH}/tasks").json()["tasks"]
    ids = [task["id"] for task in tasks]
    with connect(server.url(ARITH).replace("http", "ws") + "/ws") as connection:
        played = [_ask(connection, {"type": "reset", "data": {}})["data"]["observation"]["task_id"] for _ in range(3)]
        assert played == ids[:3]  # the usual loop: one reset per episode, each a new task
        assert _ask(connection, {"type": "reset", "data": {"task": 7}})["data"]["observation"]["task_id"] == ids[7]
        following = _ask(connection, {"type": "reset", "data": {"seed": 3}})["data"]["observation"]["task_id"]
        assert following == ids[8]  # after reset(task=X), reset() is X+1, never task 0 again
        again = _ask(connection, {"type": "reset", "data": {"task": ids[8]}})["data"]["observation"]["task_id"]
        assert again == ids[8]  # naming a task replays it
        last = _ask(connection, {"type": "reset", "data": {"task": len(ids) - 1}})["data"]["observation"]["task_id"]
        wrapped = _ask(connection, {"type": "reset", "data": {}})["data"]["observation"]["task_id"]
        assert (last, wrapped) == (ids[-1], ids[0])
    with connect(server.url(ARITH).replace("http", "ws") + "/ws") as connection:  # a new connection starts at 0
        assert _ask(connection, {"type": "reset", "data": {}})["data"]["observation"]["task_id"] == ids[0]


def test_the_schema_is_what_the_wire_needs(server: ServerProcess) -> None:
    for env_id in (ARITH, GUESS, SQL):
        schema = httpx.get(f"{server.url(env_id)}/schema").json()
        assert schema["action"]["type"] == "object" and schema["observation"]["properties"]["observation"]
        local = get_registry().make(env_id, task=0)
        first, _ = local.reset(seed=0)
        action = local.oracle_action()
        wire = action if isinstance(action, dict) else {"action": action}
        jsonschema.validate(wire, schema["action"])  # what the oracle sends validates
        jsonschema.validate(first, schema["observation"]["properties"]["observation"])
        with connect(server.url(env_id).replace("http", "ws") + "/ws") as connection:
            reset = _ask(connection, {"type": "reset", "data": {"task": 0, "seed": 0}})
            jsonschema.validate(reset["data"]["observation"], schema["observation"])
            step = _ask(connection, {"type": "step", "data": wire})
            assert step["type"] == "observation", step
            jsonschema.validate(step["data"]["observation"], schema["observation"])
        local.close()
        if env_id == ARITH:
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({"role": "assistant", "content": "4"}, schema["action"])
        else:
            assert [tool["function"]["name"] for tool in schema["tools"]] == [
                tool["function"]["name"] for tool in local.tools
            ]
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({"role": "user", "content": "hi"}, schema["action"])


def test_a_token_in_the_url_reaches_a_server_with_a_token() -> None:
    """openenv-core 0.3.0 sends no headers: ``http://USER:TOKEN@HOST/ENV`` (Basic) is how it carries a token."""
    with ServerProcess([ARITH], token="s3cret") as server:
        host = server.base_url.split("//", 1)[1]
        with connect(f"ws://rolloutgym:s3cret@{host}/{ARITH}/ws") as connection:
            assert _ask(connection, {"type": "reset", "data": {}})["type"] == "observation"
        for wrong in (
            f"ws://rolloutgym:nope@{host}/{ARITH}/ws",
            f"ws://s3cret:@{host}/{ARITH}/ws",
            f"ws://{host}/{ARITH}/ws",
        ):
            with pytest.raises(InvalidStatus):
                with connect(wrong):
                    pass
        assert httpx.get(f"http://x:s3cret@{host}/envs").status_code == 200
        assert httpx.get(f"http://x:wrong@{host}/envs").status_code == 401
