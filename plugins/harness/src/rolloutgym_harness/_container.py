"""The harness inside the task's own container (``container="auto"``, a preset's default).

When the env runs its agent side in a container (a Harbor task with ``--sandbox docker``), the
agent program runs there too, with its own tools, in the task's working directory, as the
container's unprivileged user, and the task's tests later grade that container's files in a
separate verifier container (:mod:`rolloutgym_code._harbor_container`).

* **The agent program** is an image layer on top of the task's image: a preset's install folder
  (and, for npm presets, the host's ``node``) is built once into an image ``FROM scratch``
  (:func:`agent_image`, remembered next to the install), then each task image gets a two-stage
  build that copies ``/opt/rolloutgym-agent`` from it (:meth:`TaskContainer.image`). Both are
  cached by content hash by the provider: the second episode builds nothing.
* **The endpoint** is reached without a network: the container keeps ``NetworkMode: none``; the
  endpoint's Unix socket folder is bound read-only at ``/run/rolloutgym`` and a copy of
  :mod:`rolloutgym_harness._forward` (``python3 -I -S``, standard library only; the task image
  needs a ``python3``) serves ``127.0.0.1:PORT`` inside, the address the agent was given.
* **The process** is one exec in the container (:class:`ContainerProcess`); killing it (wall
  limit, call or token limit) kills every process of the container's user.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["AGENT_ROOT", "SOCKET_FOLDER", "ContainerProcess", "TaskContainer", "agent_image", "task_container"]

AGENT_ROOT = "/opt/rolloutgym-agent"
SOCKET_FOLDER = "/run/rolloutgym"
RUN_FOLDER = "/tmp/rolloutgym"  # the run's scratch inside the container (instruction, config, stderr)
_LAYER_VERSION = "1"
_NODE_FOLDER = ".rolloutgym-node"
_PATH = f"{AGENT_ROOT}/{_NODE_FOLDER}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _engine(provider: Any) -> Any:
    return getattr(provider, "engine", None)


def agent_image(provider: Any, folder: Path, *, node: bool) -> str:
    """The image (``FROM scratch``) holding ``folder`` at ``/opt/rolloutgym-agent`` (and ``node``
    next to it); built once per install and engine, the tag remembered beside the install folder."""
    from rolloutgym.sandboxes import BuildContext

    node_path = shutil.which("node") if node else None
    if node and node_path is None:
        raise ConfigError("an npm preset in a container needs node on this machine (apt-get install nodejs)")
    engine = _engine(provider)
    key = json.dumps(
        [_LAYER_VERSION, str(folder), node_path and os.path.getsize(node_path), getattr(engine, "host", "")]
    )
    memo = folder.parent / f".{folder.name}.image-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    if memo.is_file() and engine is not None and engine.image_exists(memo.read_text().strip()):
        return memo.read_text().strip()
    if node_path is not None:
        (folder / _NODE_FOLDER).mkdir(exist_ok=True)
        target = folder / _NODE_FOLDER / "node"
        if not target.exists() or target.stat().st_size != os.path.getsize(node_path):
            shutil.copy2(node_path, target)
    dockerfile = folder / ".rolloutgym-layer.Dockerfile"
    dockerfile.write_text(f"FROM scratch\nCOPY . {AGENT_ROOT}/\n")
    tag = str(provider.build(BuildContext(folder, dockerfile=dockerfile.name)))
    memo.write_text(tag + "\n")
    return tag


class TaskContainer:
    """What a harness episode gives the env's container (the env's ``harness_layer``): the agent
    image layer on the task's image, and the endpoint's socket folder bound in.

    Args:
        folder: the agent's install folder (``None``: the task image as it is, for ``harness:command``).
        node: put the host's ``node`` in the layer (npm presets).
    """

    def __init__(self, folder: str | None, *, node: bool) -> None:
        self.folder = Path(folder) if folder else None
        self.node = node
        self.socket_dir = tempfile.mkdtemp(prefix="rolloutgym-endpoint-")
        os.chmod(self.socket_dir, 0o755)  # the container's user (uid 1000) reaches the socket in it
        self.mounts = {self.socket_dir: SOCKET_FOLDER}
        self.built: dict[str, str] = {}

    @property
    def socket_path(self) -> str:
        return os.path.join(self.socket_dir, "endpoint.sock")

    def image(self, provider: Any, base: str) -> str:
        """``base`` with the agent's folder copied in (a two-stage build, cached by the provider)."""
        from rolloutgym.sandboxes import BuildContext

        if self.folder is None:
            return base
        agent = agent_image(provider, self.folder, node=self.node)
        context = Path(tempfile.mkdtemp(prefix="rolloutgym-layer-"))
        try:
            (context / "Dockerfile").write_text(
                f"FROM {agent} AS agent\nFROM {base}\nCOPY --from=agent {AGENT_ROOT} {AGENT_ROOT}\n"
            )
            return str(provider.build(BuildContext(context)))
        finally:
            shutil.rmtree(context, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def task_container(harness: Any, environment: Any) -> TaskContainer | None:
    """The episode's :class:`TaskContainer` when the harness runs inside the env's container (set
    on the env before its reset), else ``None`` (the harness runs on the host or in bubblewrap)."""
    mode = getattr(harness, "container", False)
    if mode is False or environment is None:
        return None
    target = getattr(environment, "unwrapped", environment)
    in_container = hasattr(target, "harness_layer") and getattr(target, "sandbox_name", "bwrap") != "bwrap"
    if not in_container:
        if mode is True:
            raise ConfigError(
                f"container=true: {type(target).__name__} does not run in a container; run a Harbor task with "
                "--sandbox docker, or drop container="
            )
        return None
    if harness.agent_installer == "pip":
        raise ConfigError(f"{harness.name}: a pip-installed preset does not run in a container yet; container=false")
    layer = TaskContainer(harness.agent_folder, node=harness.agent_installer == "npm")
    target.harness_layer = layer
    return layer


class ContainerProcess:
    """One harness command run as an exec in a container, shaped like the asyncio subprocess the
    episode waits for (``communicate``, ``wait``, ``returncode``, ``kill``)."""

    def __init__(self, box: Any, argv: list[str], env: Mapping[str, str], workdir: str, timeout: float) -> None:
        self.box = box
        self.returncode: int | None = None
        self._done = asyncio.ensure_future(
            asyncio.to_thread(box.exec, argv, timeout=timeout, env=dict(env), workdir=workdir, max_output_bytes=4 << 20)
        )

    async def communicate(self) -> tuple[bytes, bytes]:
        result = await asyncio.shield(self._done)
        stderr = await asyncio.to_thread(self.box.read_files, [f"{RUN_FOLDER}/stderr.txt"], max_bytes=1 << 20)
        code = int(result.exit_code)
        self.returncode = -9 if result.timed_out or code in (137, -9) else code
        return result.output.encode(), stderr.get(f"{RUN_FOLDER}/stderr.txt", b"")

    async def wait(self) -> int:
        await asyncio.shield(self._done)
        return self.returncode if self.returncode is not None else -1

    def kill(self) -> None:
        """Kill every process of the container but its init (the exec ends with them); in a thread:
        the caller may be the event loop."""

        def kill_all() -> None:
            try:
                self.box.exec("kill -9 -1 2>/dev/null; true", user="root", timeout=30)
            except Exception:  # noqa: BLE001 - the container is already gone: nothing left to kill
                pass

        threading.Thread(target=kill_all, name="rolloutgym-harness-kill", daemon=True).start()


async def start_in_container(
    layer: TaskContainer,
    box: Any,
    *,
    command: str,
    instruction: str,
    port: int,
    env: Mapping[str, str],
    workdir: str,
    timeout: float,
) -> ContainerProcess:
    """Copy the instruction and the forwarder in, then start ``command`` behind the forwarder."""
    forwarder = (Path(__file__).with_name("_forward.py")).read_bytes()
    files = {"instruction.md": instruction.encode(), "forward.py": forwarder}
    await asyncio.to_thread(box.write_files, files, RUN_FOLDER)
    found = await asyncio.to_thread(box.exec, "command -v python3", timeout=30)
    if not found.ok:
        raise ConfigError(
            "the task's image has no python3, which carries the endpoint into the container; "
            "add it to the image, or run with --policy-arg container=false"
        )
    wrapped = f"{{ {command}\n}} 2>{RUN_FOLDER}/stderr.txt"
    argv = ["python3", "-I", "-S", f"{RUN_FOLDER}/forward.py", f"{SOCKET_FOLDER}/endpoint.sock", str(port), wrapped]
    environment = {"HOME": "/tmp", "PATH": _PATH, **env}
    return ContainerProcess(box, argv, environment, workdir, timeout)
