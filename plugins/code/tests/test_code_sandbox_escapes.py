"""The escape suite: untrusted code tries to break out of each local sandbox provider.

Every attempt must fail, end within its limit with a clear result, and leave nothing running.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox

PROVIDERS = ["bwrap", "unshare"]


@pytest.fixture(params=PROVIDERS)
def provider(request):
    from rolloutgym_code.sandbox import get_sandbox

    name = request.param
    if name == "unshare" and os.geteuid() != 0:
        pytest.skip("the unshare fallback needs root")
    require_sandbox(name)
    return get_sandbox(name)


def _limits(**overrides):
    from rolloutgym_code.sandbox import SandboxLimits

    values = {"wall_seconds": 20.0, "cpu_seconds": 10, "memory_bytes": 512 << 20, "processes": 32}
    values.update(overrides)
    return SandboxLimits(**values)


def _run(provider, code: str, **limits):
    marker = "escape-" + secrets.token_hex(6)
    script = f"# {marker}\n" + textwrap.dedent(code)
    result = provider.run(
        [provider.python, "-c", script], files={"attack.py": script.encode()}, limits=_limits(**limits)
    )
    return result, marker


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command_line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in command_line:
            found.append(int(entry.name))
    return found


def _assert_nothing_left(marker: str) -> None:
    deadline = time.monotonic() + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _processes_with(marker), f"processes of the sandboxed run are still alive: {_processes_with(marker)}"


def test_write_outside_the_workspace_fails(provider, tmp_path):
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    host_dir.chmod(0o777)  # even a world-writable host directory must stay out of reach
    targets = [str(host_dir / "pwned"), "/etc/pwned", "/usr/pwned", "/pwned", str(Path.home() / "pwned")]
    result, marker = _run(
        provider,
        f"""
        for target in {targets!r}:
            try:
                open(target, "w").write("x")
                print("WROTE", target)
            except OSError as exc:
                print("blocked", target, type(exc).__name__)
        """,
    )
    assert result.status == "ok", result.output
    assert "WROTE" not in result.output
    assert result.output.count("blocked") == len(targets)
    for target in targets:
        assert not Path(target).exists(), f"the sandbox wrote {target}"
    _assert_nothing_left(marker)


def test_secret_outside_the_workspace_stays_unread(provider, tmp_path):
    token = secrets.token_hex(16)
    secret = tmp_path / "secret.txt"
    secret.write_text(token)
    secret.chmod(0o644)  # world-readable on the host
    result, marker = _run(
        provider,
        f"""
        import glob
        paths = [{str(secret)!r}, "/root/.bashrc", "/proc/1/environ", "/etc/shadow"]
        for path in paths + glob.glob("/tmp/**/secret.txt", recursive=True):
            try:
                print("READ", path, open(path).read()[:100])
            except OSError as exc:
                print("blocked", path, type(exc).__name__)
        """,
    )
    assert result.status == "ok", result.output
    assert token not in result.output
    assert "blocked " + str(secret) in result.output
    _assert_nothing_left(marker)


def test_no_network_to_a_local_server(provider):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        result, marker = _run(
            provider,
            f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"escaped")
                print("CONNECTED")
            except OSError as exc:
                print("blocked", type(exc).__name__, exc)
            try:
                socket.getaddrinfo("example.com", 80)
                print("RESOLVED")
            except OSError as exc:
                print("no dns", type(exc).__name__)
            """,
        )
        assert result.status == "ok", result.output
        assert "CONNECTED" not in result.output and "RESOLVED" not in result.output
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    _assert_nothing_left(marker)


def test_fork_bomb_is_contained(provider):
    started = time.monotonic()
    result, marker = _run(
        provider,
        """
        import os, time
        children = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
        except OSError as exc:
            print("fork refused after", children, "children:", type(exc).__name__)
        """,
        processes=16,
        wall_seconds=15,
    )
    assert "fork refused" in result.output, result.output
    assert time.monotonic() - started < 20
    _assert_nothing_left(marker)


def test_memory_bomb_is_contained(provider):
    result, marker = _run(
        provider,
        """
        blocks = []
        try:
            while True:
                blocks.append(bytearray(64 << 20))
        except MemoryError:
            print("memory refused after", len(blocks) * 64, "MiB")
        """,
        memory_bytes=256 << 20,
    )
    assert "memory refused" in result.output, result.output
    assert result.status == "ok"
    _assert_nothing_left(marker)


def test_cpu_spin_is_killed(provider):
    started = time.monotonic()
    result, marker = _run(provider, "while True:\n    pass\n", cpu_seconds=1, wall_seconds=15)
    assert result.status == "killed", (result.status, result.output)
    assert "CPU" in result.describe() or "SIGKILL" in result.describe()
    assert time.monotonic() - started < 10
    _assert_nothing_left(marker)


def test_wall_clock_timeout_kills_background_children(provider):
    started = time.monotonic()
    result, marker = _run(
        provider,
        """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "background"], start_new_session=True)
        time.sleep(300)
        """,
        wall_seconds=1.5,
    )
    assert result.timed_out and result.status == "timeout"
    assert "wall-clock" in result.describe()
    assert time.monotonic() - started < 8
    _assert_nothing_left(marker)


def test_a_gigabyte_of_output_is_cut_off(provider):
    started = time.monotonic()
    result, marker = _run(
        provider,
        """
        import sys
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
        print("FINISHED")
        """,
        keep_output_bytes=4096,
        max_output_bytes=16 << 20,
    )
    assert result.status == "output-limit", result.status
    assert len(result.output) <= 4096 and result.output_truncated
    assert "FINISHED" not in result.output
    assert time.monotonic() - started < 15
    _assert_nothing_left(marker)


def test_a_huge_file_is_cut_off(provider):
    result, marker = _run(
        provider,
        """
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open("big.bin", "wb") as handle:
                for _ in range(1024):
                    handle.write(b"x" * (1 << 20))
            print("WROTE A GIGABYTE")
        except OSError as exc:
            print("file size refused:", type(exc).__name__)
        """,
        file_size_bytes=8 << 20,
    )
    assert "file size refused" in result.output, result.output
    _assert_nothing_left(marker)


def test_symlink_to_root_gives_nothing_of_the_host(provider, tmp_path):
    token = secrets.token_hex(16)
    (tmp_path / "secret.txt").write_text(token)
    (tmp_path / "secret.txt").chmod(0o644)
    result, marker = _run(
        provider,
        f"""
        import os
        os.symlink("/", "root")
        for path in ["root{tmp_path}/secret.txt", "root/etc/shadow"]:
            try:
                print("READ", open(path).read()[:64])
            except OSError as exc:
                print("blocked", type(exc).__name__)
        try:
            open("root{tmp_path}/pwned", "w").write("x")
            print("WROTE")
        except OSError as exc:
            print("write blocked", type(exc).__name__)
        """,
    )
    assert token not in result.output and "WROTE" not in result.output, result.output
    assert not (tmp_path / "pwned").exists()
    _assert_nothing_left(marker)


def test_killing_the_parent_fails(provider):
    result, marker = _run(
        provider,
        """
        import os, signal
        for target in (os.getppid(), 1, -1):
            try:
                os.kill(target, signal.SIGKILL)
                print("signalled", target)
            except OSError as exc:
                print("kill refused", target, type(exc).__name__)
        print("still here")
        """,
    )
    assert result.status == "ok", (result.status, result.output)
    # kill(-1) may report success with nothing to signal (no process of this uid but itself)
    assert "signalled" not in result.output.replace("signalled -1", ""), result.output
    assert "kill refused 1 " in result.output and "still here" in result.output
    _assert_nothing_left(marker)


def test_sandbox_dies_when_its_host_process_is_killed(provider):
    marker = "orphan-" + secrets.token_hex(6)
    launcher = textwrap.dedent(
        f"""
        from rolloutgym_code.sandbox import SandboxLimits, get_sandbox
        sandbox = get_sandbox({provider.name!r})
        command = [sandbox.python, "-c", "import time; time.sleep(120)", {marker!r}]
        sandbox.run(command, files={{}}, limits=SandboxLimits(wall_seconds=120))
        """
    )
    host = subprocess.Popen([sys.executable, "-c", launcher], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not _processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(marker), "the sandboxed process never started"
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
        _assert_nothing_left(marker)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def test_runs_as_an_unprivileged_user_with_a_scrubbed_environment(provider, monkeypatch):
    monkeypatch.setenv("ROLLOUTGYM_TEST_SECRET", "leaked-value")
    result, marker = _run(
        provider,
        """
        import os
        print("uid", os.getuid(), "euid", os.geteuid())
        print("env", sorted(os.environ))
        print("caps", open("/proc/self/status").read().split("CapEff:")[1].split()[0])
        """,
    )
    assert "leaked-value" not in result.output and "ROLLOUTGYM_TEST_SECRET" not in result.output
    if os.geteuid() == 0:
        assert "uid 0 " not in result.output
        assert "caps 0000000000000000" in result.output, result.output
    _assert_nothing_left(marker)


def test_private_tmp_is_writable_and_bounded(provider):
    result, marker = _run(
        provider,
        """
        import tempfile
        print("tempdir", tempfile.gettempdir())
        written = 0
        try:
            with open("/tmp/fill.bin", "wb") as handle:
                while True:
                    handle.write(b"x" * (1 << 20))
                    handle.flush()
                    written += 1
        except OSError as exc:
            print("tmp full after", written, "MiB:", type(exc).__name__)
        """,
        tmp_bytes=8 << 20,
    )
    assert "tempdir /tmp" in result.output, result.output
    assert "tmp full after" in result.output and "tmp full after 0 " not in result.output, result.output
    _assert_nothing_left(marker)
