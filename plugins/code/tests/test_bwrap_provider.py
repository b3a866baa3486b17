"""The bubblewrap sandbox behind the core's contract: ``rolloutgym.sandboxes.get_provider("bwrap")``."""

from __future__ import annotations

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.sandboxes import ResourceLimits, SandboxInfraError, SandboxUnsupported, get_provider
from rolloutgym_code.testing import require_sandbox


@pytest.fixture
def provider():
    require_sandbox("bwrap")
    with get_provider("bwrap") as made:
        yield made


def test_the_code_plugin_registers_bwrap_through_the_hook():
    spec = get_registry().sandbox_specs()["bwrap"].spec
    assert spec.entry_point == "rolloutgym_code._bwrap_provider:BubblewrapProvider"


def test_files_persist_between_execs_and_processes_do_not(provider):
    with provider.create(workdir="/app", limits=ResourceLimits(pids=64)) as box:
        box.write_files({"main.py": b"print(6 * 7)\n", "sub/data.txt": b"x"}, "/app")
        assert box.exec(["python3", "main.py"], timeout=30).output == "42\n"
        assert box.exec("echo kept > out.txt; sleep 30 &", timeout=30).ok
        later = box.exec("cat out.txt; cat /proc/[0-9]*/cmdline | tr '\\0' ' '", timeout=30).output
        assert later.startswith("kept\n") and "sleep 30" not in later
        box.exec("ln -s /etc/passwd link; ln -s /etc dirlink", timeout=30)
        found = box.read_files(["/app/sub/data.txt", "/app/link", "/app/dirlink/hostname", "/app/sub", "/etc/passwd"])
        assert found == {"/app/sub/data.txt": b"x"}
        probe = box.exec("id -u; python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'")
        assert probe.output.split()[0] != "0" and not probe.ok and "Network is unreachable" in probe.output
        assert box.exec(["cat"], stdin=b"from stdin", timeout=30).output == "from stdin"
        late = box.exec("sleep 10", timeout=1)
        assert late.timed_out and not late.ok
    assert set(box.stages) >= {"create", "first_exec", "destroy"}


def test_a_snapshot_is_a_copy_a_new_sandbox_starts_from(provider):
    with provider.create(workdir="/app") as box:
        box.write_files({"state.txt": b"before"}, "/app")
        reference = box.snapshot()
        with provider.create(image=reference, workdir="/app") as fork:
            assert fork.read_files(["/app/state.txt"]) == {"/app/state.txt": b"before"}
            fork.write_files({"state.txt": b"changed"}, "/app")
        assert box.read_files(["/app/state.txt"]) == {"/app/state.txt": b"before"}
    provider.drop_snapshot(reference)
    with pytest.raises(SandboxInfraError, match="no snapshot"):
        provider.create(image=reference)


def test_what_bubblewrap_cannot_do_is_said(provider):
    with pytest.raises(SandboxUnsupported, match="takes no image"):
        provider.create(image="python:3.11-slim")
    with pytest.raises(SandboxUnsupported, match="no network"):
        provider.create(network=True)
