"""Issue 40's "done when": the rollout SDK README's loop, walked as written against a real platform on SQLite and on
PostgreSQL. Its env file and its Python block are the README's text with only these changes: the import line
(``from rollout import`` -> ``from rolloutgym import``), the endpoint (``Client()`` -> ``Client(URL, KEY)``), ``n=50``
-> ``n=2`` (speed) and the training base model -> ``hf:tiny`` (the platform trains local models; the README's
``openai/gpt-4o-mini-2024-07-18`` is refused at submit, checked here). ``openai/gpt-4o-mini`` stays: the platform
reads it as ``openai:gpt-4o-mini`` and its workers call a local server that speaks OpenAI's documented chat
completions wire format (no network here), answering with the README task's refund. Then the trained model
(``job:ID``) runs and ``rolloutgym compare`` compares the two runs."""

from __future__ import annotations

import json

import pytest
from rolloutgym.cli import main
from rolloutgym.platform.errors import PlatformError
from rolloutgym_testing.http_server import LocalHTTPServer

from .conftest import database_for, mint
from .test_platform_seed_readme import REFUND_AGENT

pytest.importorskip("rolloutgym_trl", reason="training jobs need the TRL plugin")
pytest.importorskip("rolloutgym_openai", reason="openai/gpt-4o-mini needs the openai provider")

README_BLOCK = """
from rollout import Client

c = Client()
run = c.create_run(env_slug="refund-agent", model="openai/gpt-4o-mini", n=50)
print(run["runId"])

# When the run completes, kick off SFT on its passing rollouts
ids = c.passing_rollout_ids(run["runId"])
job = c.create_training_job(
    source_run_id=run["runId"],
    rollout_ids=ids,
    base_model="openai/gpt-4o-mini-2024-07-18",
    method="sft",
    suffix="v1",
)
print(job["id"])
"""


def _changed(block: str, url: str, key: str, base_model: str) -> str:
    return (
        block.replace("from rollout import", "from rolloutgym import")
        .replace("Client()", f"Client({url!r}, {key!r})")
        .replace("n=50", "n=2")
        .replace('base_model="openai/gpt-4o-mini-2024-07-18"', f"base_model={base_model!r}")
    )


async def _chat_completions(method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """OpenAI's ``POST /v1/chat/completions`` answer: the refund as a tool call, then a final message."""
    request = json.loads(body or b"{}")
    if method != "POST" or not path.endswith("/chat/completions"):
        return 404, {"content-type": "application/json"}, b'{"error": {"message": "not found"}}'
    answered = any(message.get("role") == "tool" for message in request.get("messages", []))
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "refund", "arguments": json.dumps({"order_id": "O-1", "amount": 100})}
    message = {"role": "assistant", "content": "Refunded."} if answered else {"role": "assistant", "content": None}
    if not answered:
        message["tool_calls"] = [call]
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": request.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop" if answered else "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return 200, {"content-type": "application/json"}, json.dumps(answer).encode()


@pytest.fixture(params=["sqlite", "postgresql"])
def seed_platform(request, servers, tmp_path):
    model_server = LocalHTTPServer(_chat_completions)
    model_server.start()
    data = tmp_path / "data"
    database = database_for(request)
    key = mint(data, "all", "run,push,train", "acme", database)
    openai = {"OPENAI_BASE_URL": f"http://127.0.0.1:{model_server.port}/v1", "OPENAI_API_KEY": "sk-local-test"}
    server = servers.start(data, database, workers=1, env=openai)
    server.keys = {"all": key}
    yield server
    server.stop()
    model_server.stop()


@pytest.mark.slow
def test_the_seed_readme_loop_as_written(seed_platform, tmp_path, capsys) -> None:
    from rolloutgym import Client

    url, key = seed_platform.url, seed_platform.keys["all"]
    (tmp_path / "refund_agent.py").write_text(REFUND_AGENT)  # the README's env file, import line changed
    with Client(url, key) as client:
        assert client.push(tmp_path / "refund_agent.py")["slug"] == "refund-agent"
    refused: dict = {}
    with pytest.raises(PlatformError, match="hf:tiny"):  # the README's own base model: refused at submit
        exec(_changed(README_BLOCK, url, key, "openai/gpt-4o-mini-2024-07-18"), refused)
    refused["c"].close()  # the README leaves its client open
    scope: dict = {}
    exec(_changed(README_BLOCK, url, key, "hf:tiny"), scope)
    scope["c"].close()
    run, ids, job = scope["run"], scope["ids"], scope["job"]
    assert sorted(ids) == ["0:0", "0:1"]  # the whole run's passing rollouts: both refunds passed
    with Client(url, key) as client:
        baseline = client.get_run(run["runId"])
        assert baseline["state"] == "succeeded" and baseline["policy"] == "openai:gpt-4o-mini", baseline
        trained = client.wait_job(job["id"], timeout=600)
        assert trained["state"] == "succeeded", trained  # SFT rebuilt the pushed env file from the run's source
        improved = client.wait_run(client.create_run("refund-agent", f"job:{job['id']}", n=2)["runId"], timeout=600)
        assert improved["state"] == "succeeded", improved
        first = client.download_run(run["runId"], tmp_path / "baseline.jsonl")
        second = client.download_run(improved["runId"], tmp_path / "improved.jsonl")
    capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "pass rate" in out and "100.0%" in out, out
