"""Who may reach what on ``rolloutgym serve``: the route table's authentication, session owners, hidden task data.

Every test runs a real server process on a free loopback port (``ServerProcess``) and
talks to it over real sockets; the route table is enumerated from ``create_app`` of the
same configuration, so a route added later is checked without editing this file.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest
from rolloutgym.serve import AsyncRemoteEnv, RemoteEnv, ServeConfig, ServerProcess, create_app
from starlette.routing import Route, WebSocketRoute
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

ARITH = "toy/arith-v0"
REFUND = "workflow/refund-v0"
KEY = "x-rolloutgym-key"


def _sample_paths(template: str) -> list[str]:
    """Concrete paths for a route template: a served env, an unknown one, odd spellings."""
    fills = {"env_path": [ARITH, "nope/x-v0", "health", "toy/arith-v0/health"], "session_id": ["1-abc", "health"]}
    paths = [template]
    for name, values in fills.items():
        pattern = re.compile(r"\{" + name + r"(:[a-z]+)?\}")
        paths = [pattern.sub(value, path) for path in paths for value in values] if pattern.search(template) else paths
    paths = [path for path in paths if "{" not in path]
    return paths + [path + "/" for path in paths]


def _route_table(config: ServeConfig) -> list[tuple[str, str, bool]]:
    """(kind, path, public) for every concrete path of every route of the app."""
    app = create_app(config)
    table = []
    for route in app.routes:
        public = bool(getattr(route, "rolloutgym_public", False))
        if isinstance(route, WebSocketRoute):
            table += [("ws", path, public and path == route.path) for path in _sample_paths(route.path)]
        elif isinstance(route, Route):
            for method in sorted(route.methods or {"GET"}):
                table += [(method, path, public and path == route.path) for path in _sample_paths(route.path)]
    return table


def test_every_route_needs_the_token_unless_the_route_table_marks_it_public() -> None:
    config = ServeConfig([ARITH], token="s3cret")
    table = _route_table(config)
    assert {(kind, path) for kind, path, public in table if public} == {("GET", "/health"), ("HEAD", "/health")}
    unrouted = ["/", "/nope", "/x/health", "/envs/health", "/sessions/health", "/health/x", "/..%2Fhealth"]
    wrong = [{}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}, {"authorization": "s3cret"}]
    # One client for the ~900 requests: httpx.request() builds a client (and a TLS context, ~40 ms of CPU) per call.
    with ServerProcess([ARITH], token="s3cret") as server, httpx.Client() as http:
        base = server.base_url
        for kind, path, public in table + [("GET", path, False) for path in unrouted]:
            for headers in wrong:
                if kind == "ws":
                    with pytest.raises(InvalidStatus):
                        asyncio.run(_ws_open(base.replace("http", "ws") + path, headers))
                    continue
                response = http.request(kind, base + path, headers=headers, content=b"{}")
                if public and path == "/health":
                    assert response.status_code == 200, (kind, path)
                else:
                    assert response.status_code == 401, (kind, path, headers, response.text)
                    assert ARITH not in response.text and "It serves" not in response.text
        # With the token, the same table answers (no 401 anywhere).
        for kind, path, _ in table:
            if kind != "ws":
                response = http.request(kind, base + path, headers={"authorization": "Bearer s3cret"}, content=b"{}")
                assert response.status_code != 401, (kind, path)


async def _ws_open(url: str, headers: dict[str, str]) -> None:
    async with connect(url, additional_headers=headers, open_timeout=30):
        pass


def _client(base: str, token: str | None, key: str) -> httpx.Client:
    headers = {KEY: key} | ({"authorization": f"Bearer {token}"} if token else {})
    return httpx.Client(base_url=base, headers=headers, timeout=60)


@pytest.mark.parametrize("tokens", [["team-a", "team-b"], []], ids=["two-tokens", "no-token"])
def test_a_session_is_reachable_only_by_the_credentials_that_opened_it(tokens: list[str]) -> None:
    options = [item for token in tokens for item in ("--token", token)]
    with ServerProcess([ARITH], options) as server:
        base = server.base_url
        owner = _client(base, tokens[0] if tokens else None, "key-1")
        others = [_client(base, tokens[0] if tokens else None, "key-2"), _client(base, None if not tokens else "", "")]
        if tokens:
            others.append(_client(base, tokens[1], "key-1"))  # the other team, even with the same key
        opened = owner.post("/sessions", json={"env": ARITH}).json()
        session = opened["session"]
        unknown = "1-" + "0" * 16
        for other in others:
            if tokens and other.headers.get("authorization") in (None, "Bearer "):
                assert other.get("/sessions").status_code == 401
                continue
            assert all(s["session"] != session for s in other.get("/sessions").json()["sessions"])
            for method, path, body in [
                ("GET", "/sessions/{}", None),
                ("POST", "/sessions/{}/reset", {"seed": 0}),
                ("POST", "/sessions/{}/step", {"action": {"role": "assistant", "content": "1"}}),
                ("POST", "/sessions/{}/call", {"method": "oracle_action"}),
                ("POST", "/sessions/{}/explode", {}),
                ("DELETE", "/sessions/{}", None),
            ]:
                foreign = other.request(method, path.format(session), json=body)
                missing = other.request(method, path.format(unknown), json=body)
                assert foreign.status_code == missing.status_code == 404, (method, path, foreign.text)
                assert (
                    foreign.json()["error"]["message"].replace(session, unknown) == missing.json()["error"]["message"]
                )
            asyncio.run(_ws_cannot_reach(base, _credentials(other), session))
        assert [s["session"] for s in owner.get("/sessions").json()["sessions"]] == [session]
        assert owner.post(f"/sessions/{session}/reset", json={"seed": 0}).status_code == 200  # still open, untouched
        assert owner.delete(f"/sessions/{session}").json() == {"closed": True}
        for client in (owner, *others):
            client.close()


def _credentials(client: httpx.Client) -> dict[str, str]:
    return {name: value for name, value in client.headers.items() if name in ("authorization", KEY)}


async def _ws_cannot_reach(base: str, headers: dict[str, str], session: str) -> None:
    url = base.replace("http", "ws") + "/ws"
    async with connect(url, additional_headers=headers, open_timeout=30) as socket:
        for number, op in enumerate(["attach", "reset", "step", "call", "close"]):
            await socket.send(json.dumps({"id": number, "op": op, "session": session, "action": "1", "method": "x"}))
            reply = json.loads(await socket.recv())
            assert reply["ok"] is False and reply["status"] == 404, reply
        await socket.send(json.dumps({"op": "attach", "session": session}))  # the one-session protocol
        reply = json.loads(await socket.recv())
        assert reply["ok"] is False and reply["status"] == 404, reply


def _secrets_of(env_id: str, task: int) -> list[str]:
    """Texts only the task data holds: the oracle's answer (what scores 1.0) for that task."""
    from rolloutgym.registry import get_registry

    environment = get_registry().make(env_id, task=task)
    environment.reset(seed=0)
    oracle = environment.oracle_action()
    environment.close()
    if env_id == ARITH:  # the oracle's answer as the server would write it, and the grader's feedback
        answer = json.dumps(oracle, separators=(",", ":"))
        return [f"expected {oracle}", f'"result":{answer}', f'"oracle_action":{answer}']
    # refund-v0 task 0: the grader's differences name the expected state (the prompt names the customer)
    return ["missing refund", '"amount": 89.99']


async def _ws_transcript(base: str, headers: dict[str, str], env_id: str, wrong: Any) -> list[str]:
    texts = []
    async with connect(base.replace("http", "ws") + "/ws", additional_headers=headers) as socket:
        for message in [
            {"op": "open", "env": env_id, "task": 0},
            {"op": "reset", "seed": 0, "prefetch": ["oracle_action"]},
            {"op": "call", "method": "oracle_action"},
            {"op": "step", "action": wrong, "prefetch": ["oracle_action"]},
        ]:
            await socket.send(json.dumps(message))
            texts.append(await socket.recv())
    async with connect(f"{base.replace('http', 'ws')}/{env_id}/ws", additional_headers=headers) as socket:
        for message in [{"type": "reset", "data": {"seed": 0}}, {"type": "step", "data": wrong}, {"type": "state"}]:
            await socket.send(json.dumps(message))
            texts.append(await socket.recv())
    return texts


def _http_transcript(client: httpx.Client, env_id: str, wrong: Any) -> list[str]:
    texts = [client.get(path).text for path in ("/envs", f"/envs/{env_id}", f"/envs/{env_id}/tasks")]
    texts += [client.get(f"/{env_id}/{path}").text for path in ("metadata", "schema", "health")]
    opened = client.post("/sessions", json={"env": env_id, "task": 0, "reset": {"seed": 0}})
    session = opened.json()["session"]
    texts.append(opened.text)
    for path, body in [
        ("reset", {"seed": 0, "prefetch": ["oracle_action"]}),
        ("call", {"method": "oracle_action"}),
        ("step", {"action": wrong, "prefetch": ["oracle_action"]}),
        ("step", {"action": wrong}),  # after the end: the env's error, message withheld
        ("reset", {"seed": "zero"}),
    ]:
        texts.append(client.post(f"/sessions/{session}/{path}", json=body).text)
    texts += [client.get("/sessions").text, client.get(f"/sessions/{session}").text]
    return texts


@pytest.mark.parametrize("env_id", [ARITH, REFUND])
def test_hidden_task_data_leaves_the_server_by_no_route(env_id: str) -> None:
    """With --hide-task-items no answer crosses: listings, oracle, prefetch, info, errors, OpenEnv, MCP."""
    wrong = {"role": "assistant", "content": "The answer is 3."}
    with ServerProcess([env_id], ["--hide-task-items"]) as server:
        client = _client(server.base_url, None, "k")
        texts = _http_transcript(client, env_id, wrong)
        texts += asyncio.run(_ws_transcript(server.base_url, _credentials(client), env_id, wrong))
        texts.append(json.dumps(asyncio.run(_mcp_transcript(server.url(env_id))), default=str))
        oracle = client.post("/sessions", json={"env": env_id}).json()
        refused = client.post(f"/sessions/{oracle['session']}/call", json={"method": "oracle_action"})
        assert refused.status_code == 403 and "--hide-task-items" in refused.json()["error"]["message"]
        assert "oracle_action" not in oracle["methods"]
        remote = RemoteEnv(server.url(env_id), task=0)
        assert not hasattr(remote, "oracle_action")
        remote.reset(seed=0)
        _, reward, _, _, info = remote.step(wrong)
        assert reward == 0.0 and set(info) <= {"score"} and "feedback" not in json.dumps(info, default=str)
        remote.close()
        client.close()
    transcript = "\n".join(texts)
    assert '"value"' in transcript and "withheld" in transcript  # scores and errors did come back
    for secret in _secrets_of(env_id, 0):
        assert secret not in transcript, f"{secret!r} left the server"


async def _mcp_transcript(url: str) -> Any:
    """What an MCP agent sees through the bridge: the tool list and a graded tool call."""
    import mcp
    from rolloutgym.serve.mcp_bridge import session_mcp_server

    environment = await AsyncRemoteEnv.open(url, task=0)
    try:
        async with mcp.Client(session_mcp_server(environment, seed=0)) as client:
            tools = await client.list_tools()
            name = tools.tools[0].name
            result = await client.call_tool(name, {})
            return [tool.model_dump() for tool in tools.tools], result.model_dump()
    finally:
        await environment.close()


def test_exposed_task_data_still_flows_by_default() -> None:
    """The default (a training server) sends what a local run records: the control for the hidden test."""
    with ServerProcess([ARITH]) as server:
        client = _client(server.base_url, None, "k")
        transcript = "\n".join(_http_transcript(client, ARITH, {"role": "assistant", "content": "The answer is 3."}))
        client.close()
    assert any(secret in transcript for secret in _secrets_of(ARITH, 0))
