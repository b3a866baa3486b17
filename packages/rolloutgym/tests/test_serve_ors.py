"""The Open Reward Standard on ``rolloutgym serve``, with the ``openreward`` SDK (0.1.167) as the client (issue 45).

A real server process on a loopback port; the SDK's own client (``OpenReward(...)
.environments.get(...)``, sessions, tools) talks to it as its quickstart does: splits and
tasks, the prompt, tools in the OpenAI format, tool calls whose every output carries the
step's reward, the terminal ``answer`` tool, errors.
"""

from __future__ import annotations

import re

import pytest

openreward = pytest.importorskip("openreward")

from rolloutgym.registry import get_registry  # noqa: E402
from rolloutgym.serve import ServerProcess  # noqa: E402

GUESS = "toy/guess-v0"
ARITH = "toy/arith-v0"
TOKEN = "s3cret"


@pytest.fixture(scope="module")
def server() -> ServerProcess:
    with ServerProcess([GUESS, ARITH], token=TOKEN) as process:
        yield process


def _env(server: ServerProcess, env_id: str, token: str = TOKEN) -> object:
    client = openreward.OpenReward(api_key=token)
    return client.environments.get(name="rolloutgym", variant=env_id, base_url=server.base_url)


def test_splits_and_tasks_are_the_envs(server: ServerProcess) -> None:
    environment = _env(server, GUESS)
    local = get_registry().tasks(GUESS)
    assert environment.list_splits() == list(dict.fromkeys(task.split for task in local))
    train = environment.list_tasks(split="train")
    assert [task.task_spec["id"] for task in train] == [task.id for task in local if task.split == "train"]
    assert environment.num_tasks(split="train") == len(train)
    assert environment.get_task(split="train", index=2).task_spec == train[2].task_spec
    assert [task.task_spec for task in environment.get_task_range(split="train", start=1, stop=3)] == [
        task.task_spec for task in train[1:3]
    ]
    assert set(train[0].task_spec) == {"index", "id", "split"}  # no task data leaves the server
    tools = environment.list_tools(format="openai")
    assert [tool["name"] for tool in tools] == ["guess", "answer"]
    with pytest.raises(Exception, match="split"):
        environment.list_tasks(split="nope")


def test_the_quickstart_loop_plays_guess_to_reward_one(server: ServerProcess) -> None:
    environment = _env(server, GUESS)
    task = environment.list_tasks(split="train")[3]
    with environment.session(task=task) as session:
        prompt = session.get_prompt()[0].text
        low, high = (int(value) for value in re.search(r"between (\d+) and (\d+)", prompt).groups())
        assert [tool.name for tool in session.list_tools()] == ["guess", "answer"]
        rewards = []
        while True:
            middle = (low + high) // 2
            output = session.call_tool("guess", {"number": middle})
            rewards.append(output.reward)
            if output.finished:
                break
            low, high = (middle + 1, high) if "higher" in output.blocks[0].text else (low, middle - 1)
        assert rewards[-1] == 1.0 and all(reward == 0.0 for reward in rewards[:-1])
        assert output.metadata["terminated"] is True and output.metadata["info"]["score"]["value"] == 1.0


def test_a_text_env_is_answered_with_the_terminal_tool(server: ServerProcess) -> None:
    environment = _env(server, ARITH)
    local = get_registry().make(ARITH, task=0)
    local.reset(seed=0)
    answer = local.oracle_action()
    for reply, reward in ((answer, 1.0), ("0", 0.0)):
        with environment.session(split="train", index=0) as session:
            assert "+" in session.get_prompt()[0].text or session.get_prompt()[0].text
            assert [tool.name for tool in session.list_tools()] == ["answer"]
            output = session.call_tool("answer", {"answer": reply})
            assert (output.reward, output.finished) == (reward, True)
    with environment.session(split="train", index=0) as session:
        with pytest.raises(Exception, match="unknown tool"):
            session.call_tool("guess", {"number": 3})


def test_a_wrong_key_is_refused(server: ServerProcess) -> None:
    with pytest.raises(Exception, match="401|nauthori|token"):
        _env(server, GUESS, token="wrong").list_splits()


def test_one_client_cannot_hoard_ors_sessions() -> None:
    """Sessions named by /create_session count against the owner's quota; deleting gives them back."""
    import httpx

    with ServerProcess([ARITH], ["--max-sessions", "6", "--max-sessions-per-owner", "3"]) as server:
        client = httpx.Client(base_url=server.base_url, timeout=60)
        answers = [client.post("/create_session") for _ in range(4)]
        assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
        assert "--max-sessions-per-owner" in answers[-1].json()["error"]["message"]
        sid = answers[0].text.split("data: ", 1)[1].split("\n", 1)[0]
        assert client.post("/delete", headers={"X-Session-ID": sid}).status_code == 200
        assert client.post("/create_session").status_code == 200
        other = httpx.Client(base_url=server.base_url, headers={"x-rolloutgym-key": "other"}, timeout=60)
        assert other.post("/create_session").status_code == 200  # another owner is not locked out
        live = answers[1].text.split("data: ", 1)[1].split("\n", 1)[0]
        for each, status in ((other, 404), (client, 404)):  # another owner's: unknown; ours: no env yet
            assert each.get("/toy/arith-v0/prompt", headers={"X-Session-ID": live}).status_code == status
        assert (
            other.post("/create", headers={"X-Session-ID": live}, json={"split": "train", "index": 0}).status_code
            == 404
        )
        assert (
            client.post("/create", headers={"X-Session-ID": live}, json={"split": "train", "index": 0}).status_code
            == 200
        )
        assert "+" in client.get("/toy/arith-v0/prompt", headers={"X-Session-ID": live}).json()[0]["text"]
        for each in (client, other):
            each.close()
