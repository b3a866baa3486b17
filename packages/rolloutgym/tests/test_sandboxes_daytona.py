"""The daytona provider through Daytona's official API clients, against a local stand-in server.

The stand-in (``rolloutgym_testing.daytona_standin``) speaks Daytona's documented wire format on
127.0.0.1: the test machines have no network and no Daytona account. What is checked is the
provider's side: the requests the official clients send, the answers they parse, the
concurrency cap, retries with backoff, quota answers as infrastructure failures.
"""

from __future__ import annotations

import threading

import pytest
from rolloutgym.sandboxes import ResourceLimits, SandboxInfraError, get_provider
from rolloutgym_testing.daytona_standin import DaytonaStandIn

pytest.importorskip("daytona_api_client", reason="the extra 'daytona' (rolloutgym[daytona]) is not installed")


@pytest.fixture
def service():
    with DaytonaStandIn(api_key="test-key") as running:
        yield running


def _provider(service, **options):
    return get_provider("daytona", api_key="test-key", api_url=service.url, backoff=0.01, **options)


def test_create_exec_copy_and_destroy_on_the_wire(service):
    provider = _provider(service)
    with provider.create(image="python:3.11", workdir="/app", limits=ResourceLimits(cpus=2)) as box:
        box.write_files({"main.py": b"print(6 * 7)\n", "pkg/data.txt": b"x"}, "/app")
        result = box.exec(["python3", "main.py"], timeout=30)
        assert result.ok and result.output == "42\n"
        box.exec("ln -s main.py link", timeout=30)
        found = box.read_files(["/app/main.py", "/app/pkg/data.txt", "/app/link", "/app/missing", "/app/pkg"])
        assert found == {"/app/main.py": b"print(6 * 7)\n", "/app/pkg/data.txt": b"x"}  # no link, folder or missing
        assert box.exec("exit 3", timeout=30).exit_code == 3
        slow = box.exec("sleep 5", timeout=1)
        assert slow.timed_out and not slow.ok
    assert service.sandboxes == {}  # deleted
    assert set(box.stages) == {"create", "first_exec", "destroy"}


def test_the_sandbox_is_asked_for_with_the_limits_labels_and_no_network(service):
    provider = _provider(service)
    box = provider.create(image="snap", limits=ResourceLimits(cpus=2, memory_bytes=3 << 30, disk_bytes=5 << 30))
    answer = service.answers[box.id]
    box.destroy()
    assert (answer["cpu"], answer["memory"], answer["disk"], answer["networkBlockAll"]) == (2, 3, 5, True)
    assert answer["labels"]["io.rolloutgym.sandbox"] == "sandbox" and answer["snapshot"] == "snap"


def test_transient_failures_are_retried_with_backoff(service):
    provider = _provider(service, retries=3)
    service.fail_next = [(503, "runner busy"), (502, "bad gateway")]
    provider.create(image="x").destroy()
    assert service.created == 1 and service.fail_next == []
    service.fail_next = [(503, "busy")] * 3
    with pytest.raises(SandboxInfraError, match=r"Daytona: creating a sandbox failed \(503\)"):
        _provider(service, retries=2).create(image="x")


def test_a_quota_answer_is_an_infrastructure_failure_at_once(service):
    provider = _provider(service, retries=5)
    service.fail_next = [(429, "Too many requests: rate limit exceeded"), (503, "never reached")]
    with pytest.raises(SandboxInfraError, match=r"quota or rate limit \(429\)"):
        provider.create(image="x")
    assert service.fail_next == [(503, "never reached")]  # not retried
    service.fail_next, service.max_alive = [], 1
    first = provider.create(image="x")
    with pytest.raises(SandboxInfraError, match=r"quota or rate limit \(403\).*quota exceeded"):
        _provider(service).create(image="x")  # another client, past the service's quota
    first.destroy()


def test_the_concurrency_cap_holds_with_many_callers(service):
    provider = _provider(service, max_concurrent=3)
    errors = []

    def episode() -> None:
        try:
            with provider.create(image="x") as box:
                box.exec("sleep 0.2", timeout=30)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=episode) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and service.created == 10
    assert service.peak_alive <= 3


def test_a_missing_key_and_a_wrong_key_are_one_line_errors(service, monkeypatch):
    monkeypatch.delenv("DAYTONA_API_KEY", raising=False)
    with pytest.raises(SandboxInfraError, match="needs an API key: set DAYTONA_API_KEY"):
        get_provider("daytona", api_url=service.url)
    with pytest.raises(SandboxInfraError, match=r"creating a sandbox failed \(401\)"):
        get_provider("daytona", api_key="wrong", api_url=service.url, retries=0).create(image="x")
