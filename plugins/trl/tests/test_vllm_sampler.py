"""rolloutgym's batched loop on TRL's vLLM backend, without a GPU and without vLLM.

Server mode: TRL's real ``VLLMClient`` talks to a local HTTP server (stdlib
``ThreadingHTTPServer`` on 127.0.0.1) that answers like ``trl vllm-serve`` / vLLM's
OpenAI-compatible server: ``GET /health``, ``GET /v1/models``, and ``POST /v1/completions``
with token-id prompts and ``return_token_ids``: ``choices[].token_ids``,
``choices[].prompt_token_ids`` and ``choices[].logprobs`` (``tokens`` as ``"token_id:N"``,
``token_logprobs``, ``top_logprobs``), as vLLM documents them. The server "generates" a
fixed reply (``"1234"`` then end of turn) so every row's tokens are known. (``VLLMClient``
refuses to start without the ``vllm`` package, which only its weight sync needs; the test
sets TRL's availability flag.)

Colocate mode: a stand-in with ``vllm.LLM.generate``'s documented call
(``generate(prompts=[{"prompt_token_ids": ...}], sampling_params=[...], use_tqdm=False)``) and
``RequestOutput`` fields (``outputs[0].token_ids``, ``outputs[0].logprobs`` as one
``{token_id: Logprob}`` dict per token).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from rolloutgym.llm import SamplingParams, run_multi_turn_rollout
from rolloutgym_trl.vllm import TRLVLLMBatchSampler


@pytest.fixture(scope="module")
def tiny():
    from rolloutgym.llm import ChatTemplateRenderer
    from rolloutgym_transformers import build_tiny

    _model, tokenizer = build_tiny()
    return ChatTemplateRenderer(tokenizer)


class _Server(ThreadingHTTPServer):
    reply: list[int] = []
    requests: list[dict] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def _send(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send({"status": "ok"} if self.path == "/health" else {"data": [{"id": "stand-in"}]})

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(request)
        choices = []
        for prompt in request["prompt"]:
            tokens = self.server.reply[: request["max_tokens"]]
            choices.append(
                {
                    "prompt_token_ids": prompt,
                    "token_ids": tokens,
                    "logprobs": {
                        "tokens": [f"token_id:{token}" for token in tokens],
                        "token_logprobs": [-0.5] * len(tokens),
                        "top_logprobs": [{f"token_id:{token}": -0.5} for token in tokens],
                    },
                }
            )
        self._send({"choices": choices})


@pytest.fixture
def server(tiny):
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.reply = tiny.encode("1234") + [tiny.stop_token_ids[0]]
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_server_mode_plays_a_wave_in_one_request_through_trls_client(tiny, server, monkeypatch) -> None:
    import trl.generation.vllm_client as vllm_client

    # VLLMClient refuses to start without the vllm package, which it needs only for weight syncing
    # (NCCL); generate() is plain HTTP. Tell it vllm is there; everything else is TRL's own code.
    monkeypatch.setattr(vllm_client, "is_vllm_available", lambda: True)
    VLLMClient = vllm_client.VLLMClient
    client = VLLMClient(base_url=f"http://127.0.0.1:{server.server_port}", connection_timeout=5)
    sampler = TRLVLLMBatchSampler(tiny, client=client)
    batch, metrics = run_multi_turn_rollout(
        sampler,
        [{"task_name": "digits", "task": index} for index in range(4)],
        {"digits": "trl/digits-v0"},
        max_seq_len=512,
        max_rollout_turns=1,
        max_tokens=8,
        temperature=0.7,
        seed=3,
    )
    assert len(server.requests) == 1 and sampler.requests == 1  # one wave, one request: 4 prompts
    request = server.requests[0]
    assert len(request["prompt"]) == 4 and request["return_token_ids"] is True
    assert request["temperature"] == 0.7 and request["max_tokens"] == 8 and request["logprobs"] == 0
    assert request["stop_token_ids"] == list(tiny.stop_token_ids) and "seed" not in request
    assert batch["total_reward"] == [1.0] * 4  # the env graded "1234": all digits
    trajectory = batch.trajectories[0]
    assert list(trajectory.steps[0].policy_tokens) == server.reply
    assert list(trajectory.steps[0].policy_logprobs) == [-0.5] * len(server.reply)
    assert trajectory.steps[0].policy_stop_reason == "stop"
    assert metrics is not None


class _Logprob(SimpleNamespace):
    pass


class _StandInLLM:
    """``vllm.LLM.generate``'s call and ``RequestOutput`` shape; replies ``reply`` to every prompt."""

    def __init__(self, reply: list[int]) -> None:
        self.reply = reply
        self.calls: list[tuple[list, list]] = []

    def generate(self, prompts, sampling_params, use_tqdm=True):
        self.calls.append((prompts, sampling_params))
        outputs = []
        for params in sampling_params:
            tokens = self.reply[: params["max_tokens"]]
            completion = SimpleNamespace(
                token_ids=tokens, logprobs=[{token: _Logprob(logprob=-0.25, rank=1)} for token in tokens]
            )
            outputs.append(SimpleNamespace(outputs=[completion]))
        return outputs


def test_colocate_mode_sends_per_row_params_and_cuts_after_a_stop_string(tiny) -> None:
    reply = tiny.encode("12 END 34")
    llm = _StandInLLM(reply)
    sampler = TRLVLLMBatchSampler(tiny, llm=llm, sampling_params=dict)
    params = [
        SamplingParams(max_tokens=32, temperature=1.0, stop=("END",), seed=5),
        SamplingParams(max_tokens=2, temperature=0.0),
    ]
    first, second = sampler.generate([[1, 2, 3], [4, 5]], params)
    ((prompts, sent),) = llm.calls
    assert prompts == [{"prompt_token_ids": [1, 2, 3]}, {"prompt_token_ids": [4, 5]}]
    assert sent[0]["seed"] == 5 and sent[0]["stop"] == ["END"] and sent[0]["include_stop_str_in_output"]
    assert sent[1]["temperature"] == 0.0 and "seed" not in sent[1]
    # kept up to and including the token that completes the stop string
    assert tiny.decode(first.token_ids).endswith("END") and first.stop_reason == "stop"
    assert first.logprobs == (-0.25,) * len(first.token_ids) and first.prompt_token_ids == (1, 2, 3)
    assert second.token_ids == tuple(reply[:2]) and second.stop_reason == "length"


def test_the_sampler_needs_exactly_one_backend(tiny) -> None:
    from rolloutgym_protocol.errors import ConfigError

    with pytest.raises(ConfigError, match="exactly one of client="):
        TRLVLLMBatchSampler(tiny)
