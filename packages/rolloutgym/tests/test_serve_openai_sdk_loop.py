"""An OpenAI-SDK agent loop over ``rolloutgym serve``'s WebSocket ``/ws`` (issue 45).

The official ``openai`` client talks to a small scripted OpenAI-compatible chat server on a
loopback port (no model, no network): it answers every ``/v1/chat/completions`` request with a
tool call in OpenAI's shape (``{"type": "function", "function": {"name", "arguments": "<JSON
text>"}}``), playing a binary search from the conversation it is sent. The agent loop is the
usual one: the SDK's message, dumped with ``model_dump()`` as the SDK produces it, is the
action sent over the raw WebSocket wire of the serve how-to (``open``, ``reset``, ``step``);
the env's tool messages go back into the conversation, until the episode ends.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

openai = pytest.importorskip("openai")
sync_client = pytest.importorskip("websockets.sync.client")

from rolloutgym.serve import ServerProcess  # noqa: E402

GUESS = "toy/guess-v0"
TOKEN = "s3cret"


def _next_guess(messages: list[dict]) -> int:
    """Binary search replayed from the conversation: the prompt's bounds, then each guess and its answer."""
    prompt = next(message["content"] for message in messages if message["role"] == "user")
    low, high = (int(value) for value in re.search(r"between (\d+) and (\d+)", prompt).groups())
    guess = None
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            guess = json.loads(message["tool_calls"][0]["function"]["arguments"])["number"]
        elif message["role"] == "tool" and guess is not None:
            low, high = (guess + 1, high) if "higher" in message["content"] else (low, guess - 1)
    return (low + high) // 2


class ScriptedChat(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` answered with one ``guess`` tool call in OpenAI's shape."""

    calls = 0

    def do_POST(self) -> None:  # noqa: N802 - the handler's protocol
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/v1/chat/completions" and request["tools"][0]["function"]["name"] == "guess"
        type(self).calls += 1
        call = {
            "id": f"call_{type(self).calls}",
            "type": "function",
            "function": {"name": "guess", "arguments": json.dumps({"number": _next_guess(request["messages"])})},
        }
        body = json.dumps(
            {
                "id": f"chatcmpl-{type(self).calls}",
                "object": "chat.completion",
                "created": 0,
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def chat_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedChat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with ServerProcess([GUESS], token=TOKEN) as process:
        yield process


def _ask(websocket, message: dict) -> dict:
    websocket.send(json.dumps(message))
    answer = json.loads(websocket.recv())
    assert answer["ok"], answer
    return answer["result"]


def _connect(server: ServerProcess):
    url = server.base_url.replace("http://", "ws://", 1) + "/ws"
    return sync_client.connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"})


def test_the_openai_sdk_agent_loop_plays_guess_to_reward_one(server: ServerProcess, chat_url: str) -> None:
    client = openai.OpenAI(base_url=chat_url, api_key="not-used")
    with _connect(server) as websocket:
        opened = _ask(websocket, {"op": "open", "env": GUESS, "task": 3})
        messages = _ask(websocket, {"op": "reset", "seed": 0})["observation"]
        rewards = []
        for _ in range(10):
            reply = client.chat.completions.create(model="scripted", messages=messages, tools=opened["tools"])
            message = reply.choices[0].message
            assert message.tool_calls[0].type == "function"  # OpenAI's shape, as the SDK parsed it
            action = message.model_dump()
            step = _ask(websocket, {"op": "step", "action": action})
            rewards.append(step["reward"])
            messages += [action, *step["observation"]]
            if step["terminated"] or step["truncated"]:
                break
        _ask(websocket, {"op": "close"})
    assert step["terminated"] and rewards[-1] == 1.0 and all(reward == 0.0 for reward in rewards[:-1])
    assert step["info"]["score"]["value"] == 1.0
    assert 1 < len(rewards) <= 7 and messages[-1]["content"] == "correct"


def test_a_wrong_shape_is_answered_with_the_accepted_shapes_and_the_session_goes_on(server: ServerProcess) -> None:
    with _connect(server) as websocket:
        _ask(websocket, {"op": "open", "env": GUESS, "task": 3})
        _ask(websocket, {"op": "reset", "seed": 0})
        wrong = {"role": "assistant", "tool_calls": [{"call": "guess", "args": {"number": 5}}]}
        step = _ask(websocket, {"op": "step", "action": wrong})
        error = step["observation"][0]["content"]
        assert error.startswith("error:") and not step["terminated"]
        assert '"type": "function"' in error and "tool_use" in error and '"arguments"' in error
        call = {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": '{"number": 5}'}}
        step = _ask(websocket, {"op": "step", "action": {"role": "assistant", "tool_calls": [call]}})
        assert step["observation"][0]["content"] in {"higher", "lower", "correct"}
        assert step["observation"][0]["tool_call_id"] == "c1"
