"""The docker sandbox provider on a real engine: podman's API service on a socket this test session owns.

Skipped locally, failed under CI=true, when podman or the base image (scripts/build_base_images.sh) is missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from rolloutgym.sandboxes import BuildContext, ResourceLimits, SandboxInfraError, get_provider
from rolloutgym.sandboxes.docker import DockerProvider
from rolloutgym_testing.podman import BASE_IMAGE, PodmanService, require_podman


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    require_podman()
    with PodmanService.start(tmp_path_factory.mktemp("podman")) as running:
        yield running


@pytest.fixture(scope="module")
def provider(service):
    with get_provider("docker", host=service.host) as made:
        yield made


@pytest.fixture(scope="module")
def box(provider):
    limits = ResourceLimits(cpus=1, memory_bytes=256 << 20, pids=64, disk_bytes=32 << 20)
    with provider.create(image=BASE_IMAGE, workdir="/app", limits=limits) as made:
        yield made


def test_files_go_in_and_out_and_commands_run_as_an_unprivileged_user(box):
    box.write_files({"main.py": b"import os\nprint(6 * 7, os.getuid())\n", "data/x.txt": b"x"}, "/app")
    result = box.exec(["python3", "main.py"], timeout=30)
    assert result.ok and result.output == "42 1000\n"
    box.exec("ln -s /etc/passwd /app/link", timeout=30)
    found = box.read_files(["/app/data/x.txt", "/app/link", "/app/missing", "/app/data"])
    assert found == {"/app/data/x.txt": b"x"}  # the link, the folder and the missing file are left out
    assert set(box.stages) >= {"create", "start", "first_exec"}


def test_the_root_is_read_only_and_the_writable_places_are_capped(box):
    result = box.exec("touch /usr/x; dd if=/dev/zero of=/app/big bs=1M count=64 2>&1; rm -f /app/big", timeout=60)
    assert "Read-only file system" in result.output
    assert "No space left on device" in result.output  # 32 MiB of tmpfs: the host's disk never sees it


def test_there_is_no_network(box):
    code = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"
    result = box.exec(["python3", "-c", code], timeout=30)
    assert not result.ok and "Network is unreachable" in result.output


def test_a_fork_bomb_meets_the_pids_limit_and_the_sandbox_lives_on(box):
    bomb = textwrap.dedent(
        """
        import os
        read, write = os.pipe()
        children = 0
        try:
            for _ in range(500):
                if os.fork() == 0:
                    os.close(write)
                    os.read(read, 1)  # held until the parent lets go
                    os._exit(0)
                children += 1
        except OSError as exc:
            print("refused after", children, type(exc).__name__)
        os.close(write)
        for _ in range(children):
            os.wait()
        """
    )
    result = box.exec(["python3", "-c", bomb], timeout=60)
    assert "refused after" in result.output and "BlockingIOError" in result.output
    assert int(result.output.split()[2]) < 64  # the pids limit, not the 500 asked for
    assert box.exec("echo alive", timeout=30).output == "alive\n"


def test_memory_past_the_limit_is_killed(box):
    result = box.exec(["python3", "-c", "x = bytearray(600 << 20); print('allocated')"], timeout=60)
    assert not result.ok and "allocated" not in result.output


def test_the_deadline_kills_the_command_and_its_children(box):
    result = box.exec("sleep 60 & sleep 60; echo never", timeout=1.5)
    assert result.timed_out and "never" not in result.output
    running = box.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", timeout=30).output
    assert "/.rolloutgym/agent.py" in running and "sleep 60" not in running  # pid 1, the exec agent, lives on


def test_the_agent_is_out_of_the_users_reach_and_commands_skip_the_engine(box):
    assert box._agent is not None  # the base image has Python: commands go through the agent
    result = box.exec(
        "ls /.rolloutgym; echo 'print(1)' > /app/x.py; cat | python3 -", stdin=b"print(6 * 7)", timeout=30
    )
    assert "Permission denied" in result.output and result.output.endswith("42\n")
    assert box.exec("id -u", user="root", timeout=30).output == "0\n"
    assert box.exec("id -un", user="nobody", timeout=30).output == "nobody\n"  # a name: through the engine
    assert box.exec(["no-such-command"], timeout=30).exit_code == 127


def test_without_the_agent_commands_go_through_the_engine(service):
    limits = ResourceLimits(memory_bytes=256 << 20, disk_bytes=32 << 20)
    with (
        DockerProvider(service.host, agent=False, reap=False) as plain,
        plain.create(image=BASE_IMAGE, workdir="/app", limits=limits) as made,
    ):
        assert made._agent is None
        assert made.exec(["sh", "-c", "cat; id -u"], stdin=b"in ", timeout=30).output == "in 1000\n"
        made.exec("ln -s /etc/passwd /app/link; echo x > /app/x.txt", timeout=30)
        assert made.read_files(["/app/x.txt", "/app/link"]) == {"/app/x.txt": b"x\n"}
        result = made.exec("sleep 60 & sleep 60", timeout=1.5)
        assert result.timed_out
        assert "sleep 60" not in made.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '", timeout=30).output


def test_a_snapshot_carries_the_working_folder_into_a_new_sandbox(provider, box):
    box.write_files({"state.txt": b"before the fork"}, "/app")
    image = box.snapshot()
    with provider.create(image=image, workdir="/app", limits=ResourceLimits(disk_bytes=32 << 20)) as fork:
        assert fork.read_files(["/app/state.txt"]) == {"/app/state.txt": b"before the fork"}
        fork.write_files({"state.txt": b"changed in the fork"}, "/app")
    assert box.read_files(["/app/state.txt"]) == {"/app/state.txt": b"before the fork"}


def test_a_build_context_builds_once_with_its_base_mapped_to_a_local_image(provider, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.11-slim\nRUN mkdir -p /app && echo installed > /opt/marker\n"
        "COPY hello.py /app/hello.py\nWORKDIR /app\n"
    )
    (tmp_path / "hello.py").write_text("print(open('/opt/marker').read().strip())\n")
    context = BuildContext(tmp_path, image_map={"python:3.11-slim": BASE_IMAGE})
    image = provider.build(context)
    assert image.startswith("localhost/rolloutgym-build:")
    assert provider.build(context) == image  # cached by content hash
    with provider.create(image=image, workdir="/app") as built:
        assert built.exec(["python3", "hello.py"], timeout=30).output == "installed\n"


def test_build_failures_are_one_line_infrastructure_errors(provider, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\n")
    with pytest.raises(
        SandboxInfraError, match=r"'python:3.11-slim' is not on the engine.*--image-map python:3.11-slim="
    ):
        provider.build(BuildContext(tmp_path))
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nRUN echo about to fail && exit 3\n")
    with pytest.raises(SandboxInfraError, match=r"the image did not build.*log: .*about to fail") as caught:
        provider.build(BuildContext(tmp_path))
    assert "\n" not in str(caught.value)
    with pytest.raises(SandboxInfraError, match=r"--image-map nosuch/image:1="):
        provider.create(image="nosuch/image:1")


def test_an_engine_that_is_down_names_its_socket_and_the_fix(tmp_path):
    host = f"unix://{tmp_path}/nothing.sock"
    with pytest.raises(SandboxInfraError, match=rf"engine at {host} does not answer: start it .*podman system service"):
        get_provider("docker", host=host)


def test_a_warm_pool_hands_out_started_sandboxes(service):
    settings = {"image": BASE_IMAGE, "workdir": "/app", "limits": ResourceLimits(disk_bytes=32 << 20)}
    with DockerProvider(service.host, pool_size=1, reap=False) as pooled:
        pooled.warm(**settings)
        assert pooled.ready(**settings) == 1
        warm = pooled.create(**settings)
        assert "pool_age" in warm.stages and warm.stages["create"] == 0.0
        assert warm.exec("echo warm", timeout=30).output == "warm\n"
        warm.destroy()
        cold = pooled.create(**{**settings, "workdir": "/elsewhere"})  # other settings: started now
        assert "pool_age" not in cold.stages and cold.stages["create"] > 0
        cold.destroy()
    assert pooled.ready(**settings) == 0  # closing the provider removed what the pool held
    listed = subprocess.run(["podman", "ps", "-a", "-q", "--no-trunc"], capture_output=True, text=True).stdout
    assert warm.id not in listed and cold.id not in listed  # removed behind destroy; close waited for it


def test_the_reaper_removes_what_a_killed_run_left(service, tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        from rolloutgym.sandboxes import get_provider
        box = get_provider("docker", host={service.host!r}, reap=False).create(image={BASE_IMAGE!r})
        print(box.id, flush=True)
        time.sleep(600)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as child:
        container = child.stdout.readline().strip()
        os.kill(child.pid, signal.SIGKILL)
    listed = subprocess.run(["podman", "ps", "-a", "-q", "--no-trunc"], capture_output=True, text=True).stdout
    assert container and container in listed
    folders = list(Path(tempfile.gettempdir()).glob(f"rolloutgym-agent-*-{child.pid}-*"))
    assert folders  # the exec agents' host folders of the killed run
    with DockerProvider(service.host) as fresh:
        fresh.check()  # the reaper runs when a provider starts
    listed = subprocess.run(["podman", "ps", "-a", "-q", "--no-trunc"], capture_output=True, text=True).stdout
    assert container not in listed
    assert not any(folder.exists() for folder in folders)


def test_the_reaper_prunes_old_builds_past_the_kept_ones_but_not_one_in_use(provider, tmp_path):
    from rolloutgym.sandboxes._build import prune_builds

    mine = f"io.rolloutgym.test={os.getpid()}-{tmp_path.name}"  # only this test's images: the machine's stay
    images = []
    for number in (1, 2):
        (tmp_path / str(number)).mkdir()
        (tmp_path / str(number) / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nLABEL {mine} number={number}\n")
        images.append(provider.build(BuildContext(tmp_path / str(number))))
    assert prune_builds(provider.engine, keep=0, labels=(mine,)) == 0  # younger than an hour
    assert prune_builds(provider.engine, keep=1, min_age=0, labels=(mine,)) == 1
    assert [provider.engine.image_exists(image) for image in images] == [False, True]
    with provider.create(image=images[1]):
        assert prune_builds(provider.engine, keep=0, min_age=0, labels=(mine,)) == 0  # in use
    assert prune_builds(provider.engine, keep=0, min_age=0, labels=(mine,)) == 1


def test_root_in_the_sandbox_cannot_point_the_agents_socket_at_a_host_socket(provider, service):
    with provider.create(image=BASE_IMAGE) as made:
        swap = f"rm /.rolloutgym/agent.sock && ln -s {service.socket} /.rolloutgym/agent.sock"
        assert made.exec(swap, user="root", timeout=30).ok
        with pytest.raises(SandboxInfraError, match="agent.sock is not a socket"):
            made.exec("true", timeout=30)  # the link is not followed to the engine's socket
