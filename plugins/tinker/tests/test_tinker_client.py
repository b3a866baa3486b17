"""Tinker client creation deadlines, credentials and sampling errors, with the real SDK.

The "unresponsive service" is a TCP listener on 127.0.0.1 that accepts connections and
never answers, which is what makes the SDK block; the SDK runs in a subprocess (its stuck
threads stay out of the test process). ``StandInSamplingClient`` stands in for the remote
sampler (the SDK's own types).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import tinker
from rolloutgym.llm import SamplingParams
from rolloutgym_protocol.errors import PolicyError
from rolloutgym_tinker import TinkerSampler, create_sampling_client, make_policy
from rolloutgym_tinker._deadline import run_with_deadline
from rolloutgym_tinker.testing import StandInSamplingClient


@pytest.fixture
def silent_service() -> Iterator[str]:
    """A TCP service on 127.0.0.1 that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
    except OSError:
        pass
    listener.close()
    thread.join(timeout=5)
    for connection in accepted:
        connection.close()


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_run_with_deadline_gives_up_on_a_call_that_never_returns() -> None:
    started = time.monotonic()
    with pytest.raises(PolicyError, match=r"waiting forever did not finish within 0.3 s\. try again"):
        run_with_deadline(threading.Event().wait, seconds=0.3, what="waiting forever", hint="try again")
    assert time.monotonic() - started < 60  # the call never returns: any bound shows the deadline; slack for load


def test_client_creation_against_an_unresponsive_service_hits_the_deadline(silent_service: str) -> None:
    env = dict(os.environ, TINKER_API_KEY="tml-test-key", TINKER_BASE_URL=silent_service)
    command = [
        sys.executable,
        "-m",
        "rolloutgym",
        "run",
        "toy/arith-v0",
        "--policy",
        "tinker:Qwen/Qwen3-8B",
        "--policy-arg",
        "client_deadline=2",
        "--limit",
        "1",
        "-q",
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=180)
    assert result.returncode != 0
    assert "PolicyError: creating a Tinker sampling client for 'Qwen/Qwen3-8B'" in result.stderr
    assert "did not finish within 2 s" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_service_fails_fast_without_starting_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    monkeypatch.setenv("TINKER_API_KEY", "tml-test-key")
    started = time.monotonic()
    with pytest.raises(PolicyError, match=rf"cannot reach the Tinker service at {url}: cannot connect"):
        create_sampling_client("Qwen/Qwen3-8B", base_url=url, deadline=30)
    assert time.monotonic() - started < 25  # below the 30 s deadline: it failed on the refused connection


def test_missing_api_key_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    with pytest.raises(PolicyError, match="set TINKER_API_KEY"):
        make_policy("Qwen/Qwen3-8B")


def sample(sampler: TinkerSampler, params: SamplingParams, prompt: list[int] | None = None) -> Any:
    return asyncio.run(sampler.sample(prompt or [1, 2, 3], params))


def test_sampler_sends_sdk_types_and_returns_tokens_verbatim() -> None:
    client = StandInSamplingClient([[7, 8, 9, 256, 5]])
    result = sample(
        TinkerSampler(client), SamplingParams(max_tokens=10, temperature=0.0, seed=3, stop_token_ids=(256,))
    )
    assert client.prompts == [[1, 2, 3]]
    params = client.params[0]
    assert isinstance(params, tinker.SamplingParams)
    assert (params.max_tokens, params.temperature, params.seed, list(params.stop)) == (10, 0.0, 3, [256])
    assert result.token_ids == (7, 8, 9, 256) and result.stop_reason == "stop"
    assert result.logprobs == (-0.25,) * 4


def test_sampler_reports_length() -> None:
    result = sample(TinkerSampler(StandInSamplingClient([[7, 8, 9]])), SamplingParams(max_tokens=2))
    assert result.token_ids == (7, 8) and result.stop_reason == "length"


def test_stop_strings_and_ids_are_sent_as_strings() -> None:
    client = StandInSamplingClient([[7]])
    sampler = TinkerSampler(client, token_text=lambda token: f"<{token}>")
    sample(sampler, SamplingParams(stop=("\n\nUser:",), stop_token_ids=(256,)))
    assert list(client.params[0].stop) == ["\n\nUser:", "<256>"]


class SlowClient(StandInSamplingClient):
    async def sample_async(self, prompt: Any, num_samples: int, sampling_params: Any, **options: Any) -> Any:
        await asyncio.sleep(30)


class FailingClient(StandInSamplingClient):
    async def sample_async(self, prompt: Any, num_samples: int, sampling_params: Any, **options: Any) -> Any:
        raise tinker.APIConnectionError(request=None)  # type: ignore[arg-type]


def test_a_slow_sample_times_out() -> None:
    with pytest.raises(PolicyError, match="within 0.2 s"):
        sample(TinkerSampler(SlowClient([[1]]), timeout=0.2), SamplingParams())


def test_sdk_errors_become_policy_errors() -> None:
    with pytest.raises(PolicyError, match="Tinker sampling failed: APIConnectionError"):
        sample(TinkerSampler(FailingClient([[1]])), SamplingParams())
