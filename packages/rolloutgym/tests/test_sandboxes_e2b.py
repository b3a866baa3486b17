"""The e2b provider (httpx on E2B's wire format) against a local stand-in server.

The stand-in (``rolloutgym_testing.e2b_standin``) speaks the wire format E2B's official SDK uses
(the control plane's JSON and envd's Connect-RPC with the JSON codec) on 127.0.0.1: the test
machines have no network and no E2B account. What is checked is the provider's side: the
requests it sends, the streams it parses, the deadline, the cap, retries and quota answers.
"""

from __future__ import annotations

import base64
import threading

import pytest
from rolloutgym.sandboxes import SandboxInfraError, available_providers, get_provider
from rolloutgym.sandboxes.e2b import envelope, read_envelopes
from rolloutgym_testing.e2b_standin import E2BStandIn

pytest.importorskip("httpx")


@pytest.fixture
def service():
    with E2BStandIn(api_key="test-key") as running:
        yield running


@pytest.fixture
def make(service):
    made = []

    def provider(**options):
        urls = {"api_url": service.url, "sandbox_url": service.url}
        made.append(get_provider("e2b", api_key="test-key", backoff=0.01, **urls, **options))
        return made[-1]

    yield provider
    for provider in made:
        provider.close()


def test_create_exec_copy_and_destroy_on_the_wire(service, make):
    assert "e2b" in available_providers()
    provider = make()
    with provider.create(image="python-3.11", workdir="/app", env={"A": "1"}) as box:
        body = service.sandboxes[box.id]["body"]
        assert body["templateID"] == "python-3.11" and body["allow_internet_access"] is False
        assert body["metadata"]["io.rolloutgym.sandbox"] == "sandbox" and body["envVars"] == {"A": "1"}
        box.write_files({"main.py": b"print(6 * 7)\n", "pkg/data.txt": b"x"}, "/app")
        result = box.exec(["python3", "main.py"], timeout=30)
        assert result.ok and result.output == "42\n"
        assert box.exec("exit 3", timeout=30).exit_code == 3
        box.exec("ln -s main.py link", timeout=30)
        found = box.read_files(["/app/main.py", "/app/pkg/data.txt", "/app/link", "/app/missing", "/app/pkg"])
        assert found == {"/app/main.py": b"print(6 * 7)\n", "/app/pkg/data.txt": b"x"}  # no link, folder or missing
        slow = box.exec("echo started; sleep 30; echo never", timeout=1)
        assert slow.timed_out and slow.output == "started\n"
        assert service.processes[max(service.processes)].wait(timeout=30) == -9  # killed by SendSignal
        headers = service.requests[-1][2]
        assert headers["X-Access-Token"] == service.sandboxes[box.id]["token"] and headers["E2b-Sandbox-Id"] == box.id
        assert base64.b64decode(headers["Authorization"].split()[1]) == b"user:"  # the kill, as the default user
    assert service.sandboxes == {}  # deleted
    assert set(box.stages) == {"create", "first_exec", "destroy"}


def test_connect_envelopes_round_trip_across_chunk_boundaries():
    stream = envelope({"event": {"start": {"pid": 7}}}) + envelope({}, flags=2)
    chunks = [stream[:3], stream[3:11], stream[11:]]
    assert list(read_envelopes(iter(chunks))) == [(0, {"event": {"start": {"pid": 7}}}), (2, {})]


def test_the_cap_retries_and_quota_answers(service, make):
    provider = make(max_concurrent=2)
    first, second = provider.create(), provider.create()
    third: list = []
    waiting = threading.Thread(target=lambda: third.append(provider.create()))
    waiting.start()
    waiting.join(0.3)
    assert not third  # waits for a slot
    first.destroy()
    waiting.join(30)
    assert third and service.peak_alive == 2
    second.destroy()
    third[0].destroy()
    service.fail_next = [(503, "upstream unavailable"), (502, "bad gateway")]
    provider.create().destroy()  # retried past both
    service.max_alive = 0
    with pytest.raises(SandboxInfraError, match=r"quota or rate limit \(429\).*concurrent sandboxes"):
        provider.create()
    service.max_alive, service.fail_next = None, [(400, "template not found")]
    with pytest.raises(SandboxInfraError, match=r"creating a sandbox failed \(400\)"):
        provider.create()


def test_a_missing_key_and_a_dead_runs_sandboxes(service, make, monkeypatch):
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    with pytest.raises(SandboxInfraError, match="E2B_API_KEY"):
        get_provider("e2b", api_url=service.url)
    provider = make()
    mine = provider.create()
    orphan = provider.create(labels={"run": "old"})
    service.sandboxes[orphan.id]["body"]["metadata"]["io.rolloutgym.sandbox.owner"] = "nohost/1/0"
    assert provider.reap() == 0  # another host's: left alone
    service.sandboxes[orphan.id]["body"]["metadata"]["io.rolloutgym.sandbox.owner"] = mine._owner.owner + "9"
    assert provider.reap() == 1 and set(service.sandboxes) == {mine.id}
    mine.destroy()
