"""A Harbor task in its own image: the agent in one container, the verifier in another.

Used by :class:`~rolloutgym_code.harbor.HarborTaskEnv` when it runs with ``sandbox="docker"``
(``rolloutgym run TASKS --sandbox docker``), on any provider of :mod:`rolloutgym.sandboxes`
that builds images. The same methods as :class:`~rolloutgym_code._harbor_sandbox.EpisodeSandbox`.

* **The agent's container** is built from the task's ``environment/`` folder only (its
  Dockerfile, ``FROM`` lines mapped by ``--image-map``; cached by content hash), so
  ``task.toml``, ``tests/`` and ``solution/`` are never in it. Its root is read-only, its
  working directory a size-capped tmpfs (``[environment] storage_mb``, else the env's
  ``workspace_mib``), no network unless ``[environment] allow_internet = true``, uid 1000,
  ``cpus``/``memory_mb`` from ``task.toml``. The oracle's ``solve.sh`` is read on the trusted
  side and sent as one ``bash`` command, like any agent's.
* **The verifier's container** is separate (Harbor's ``[verifier] environment_mode =
  "separate"``, for every task): after the episode the agent's container is frozen (its
  filesystem, the working directory's tmpfs included), then removed, so none of the agent's
  processes survive; the verifier starts from that frozen image, or, when the task has a
  ``tests/Dockerfile``, from that image with the agent's working directory copied in. Only then
  are ``tests/`` copied to ``/tests`` and a fresh ``/logs/verifier`` made; ``test.sh`` runs as
  root; every process is killed before the reward file is read, from that container only,
  never through a link.
"""

from __future__ import annotations

import atexit
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rolloutgym.sandboxes import BuildContext, ResourceLimits, RunningSandbox, SandboxInfraError, get_provider

from ._harbor_task import HarborTask
from ._namespace_sandbox import _remove_tree
from ._sandbox_types import SandboxLimits, SandboxResult

__all__ = ["ContainerEpisode"]

_MAX_TESTS_BYTES = 64 << 20
_PROVIDERS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def shared_provider(name: str, options: Mapping[str, Any]) -> Any:
    """One provider per name and options in this process (its reaper runs once, its pool is shared)."""
    key = (name, repr(sorted(options.items())))
    with _LOCK:
        if key not in _PROVIDERS:
            _PROVIDERS[key] = get_provider(name, **options)
        return _PROVIDERS[key]


@atexit.register
def _close_providers() -> None:
    for provider in _PROVIDERS.values():
        provider.close()
    _PROVIDERS.clear()


def _number(table: Mapping[str, Any], key: str) -> float | None:
    value = table.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


class ContainerEpisode:
    """The sandbox of one Harbor episode on a container provider.

    Args:
        task: the task.
        provider: a provider name (``docker``) or object.
        provider_options: options of ``get_provider`` (``host=...``).
        image_map: ``FROM`` rewrites for offline base images.
        workspace_bytes: the working directory's size when ``task.toml`` gives no ``storage_mb``.
    """

    def __init__(
        self,
        task: HarborTask,
        *,
        provider: Any = "docker",
        provider_options: Mapping[str, Any] | None = None,
        image_map: Mapping[str, str] | None = None,
        workspace_bytes: int = 256 << 20,
        layer: Any = None,
    ) -> None:
        self.task = task
        self.layer = layer  # a harness run inside the agent's container: its image layer and mounts
        self.workdir = task.workdir
        self._provider_spec = (provider, dict(provider_options or {}))
        self.image_map = dict(image_map or {})
        self.workspace_limit = workspace_bytes
        self.provider: Any = None
        self.agent: RunningSandbox | None = None
        self.verifier: RunningSandbox | None = None
        self._images: list[str] = []
        self._logs: list[str] = []
        self.stages: dict[str, dict[str, float]] = {}

    # -- the agent's container ----------------------------------------------------------

    def check(self) -> None:
        """Build the task's image (cached) and start the agent's container."""
        name, options = self._provider_spec
        self.provider = name if not isinstance(name, str) else shared_provider(name, options)
        if "build" not in self.provider.capabilities:
            raise SandboxInfraError(f"Harbor tasks need a provider that builds images; {self.provider.name} cannot")
        environment = self.task.environment
        storage = _number(environment, "storage_mb")
        limits = ResourceLimits(
            cpus=_number(environment, "cpus") or 1.0,
            memory_bytes=int((_number(environment, "memory_mb") or 2048) * (1 << 20)),
            pids=512,
            disk_bytes=int(storage * (1 << 20)) if storage else self.workspace_limit,
        )
        build, image, extra = self._agent_context(), self._prebuilt_image(), {}
        if self.layer is not None:  # the agent program on top of the task's image (a cached build)
            image, build = self.layer.image(self.provider, self.provider.build(build) if build else image), None
            extra = {"mounts": self.layer.mounts} if self.layer.mounts else {}
        self.agent = self.provider.create(
            build=build,
            image=image,
            workdir=self.workdir,
            limits=limits,
            network=bool(environment.get("allow_internet", False)),
            labels={"io.rolloutgym.harbor.task": self.task.id[:200], "io.rolloutgym.harbor.role": "agent"},
            **extra,
        )

    def _agent_context(self) -> BuildContext | None:
        folder = Path(self.task.path) / "environment"
        if (folder / "Dockerfile").is_file():
            return BuildContext(folder, image_map=self.image_map)
        return None

    def _prebuilt_image(self) -> str | None:
        if self._agent_context() is not None:
            return None
        image = self.task.environment.get("docker_image")
        if not isinstance(image, str) or not image:
            raise SandboxInfraError(
                f"{self.task.path}: no environment/Dockerfile and no [environment] docker_image: nothing to run the "
                "agent in"
            )
        return self.image_map.get(image, image)

    def seed(self, files: Mapping[str, bytes]) -> None:
        """Nothing to do: the image's build already put the Dockerfile's files in place."""

    def workspace_bytes(self) -> int:
        """0: the working directory is a tmpfs of fixed size; writing past it fails inside the container."""
        return 0

    def shell(self, script: str, *, limits: SandboxLimits | None = None) -> SandboxResult:
        """Run ``script`` with bash in the agent's container (as the agent's unprivileged user)."""
        if self.agent is None:
            raise SandboxInfraError("the agent's container is gone")
        limits = limits or SandboxLimits()
        result = self.agent.exec(
            ["/bin/bash", "-c", script], timeout=limits.wall_seconds, max_output_bytes=limits.keep_output_bytes
        )
        return SandboxResult(
            exit_code=-9 if result.timed_out else result.exit_code,
            output=result.output,
            output_truncated=result.output_truncated,
            timed_out=result.timed_out,
            duration=result.duration,
            sandbox=self.provider.name,
        )

    # -- the verifier's container -------------------------------------------------------

    def verify(
        self, tests_dir: Path, script: str, *, limits: SandboxLimits | None = None, environment: dict[str, str]
    ) -> tuple[SandboxResult, str]:
        """Freeze and remove the agent's container, start the verifier's, copy the tests in, run them, read the
        reward. Returns the result and a host folder holding what ``/logs/verifier`` held (regular files)."""
        if self.agent is None:
            raise SandboxInfraError("the agent's container is gone before verification")
        limits = limits or SandboxLimits()
        tests = self._read_tests(tests_dir)
        frozen = self.agent.snapshot()
        self._images.append(frozen)
        workdir_files = self._agent_workdir_tar() if self._verifier_context() else None
        self._retire_agent()
        self.verifier = self.provider.create(
            image=frozen if workdir_files is None else None,
            build=self._verifier_context(),
            workdir=self.workdir,
            user="root",
            limits=ResourceLimits(cpus=1.0, memory_bytes=2 << 30, pids=512, disk_bytes=None),
            network=bool(self.task.verifier.get("allow_internet", False)),
            labels={"io.rolloutgym.harbor.task": self.task.id[:200], "io.rolloutgym.harbor.role": "verifier"},
        )
        if workdir_files is not None:
            self._put_tar(self.verifier, workdir_files)
        fresh = "rm -rf /tests /logs/verifier && mkdir -p /tests /logs/verifier /logs/agent && chmod 755 /logs"
        made = self.verifier.exec(fresh, user="root", timeout=60)
        if not made.ok:
            raise SandboxInfraError(f"preparing the verifier's container failed: {made.output[-300:]}")
        self.verifier.write_files(tests, "/tests", user="root")
        result = self.verifier.exec(
            ["/bin/bash", "-c", script],
            user="root",
            env=environment,
            timeout=limits.wall_seconds,
            max_output_bytes=limits.keep_output_bytes,
        )
        self.verifier.exec("kill -9 -1 2>/dev/null; true", user="root", timeout=30)
        found = self.verifier.read_files(["/logs/verifier/reward.txt", "/logs/verifier/reward.json"], max_bytes=1 << 20)
        logs = tempfile.mkdtemp(prefix="rolloutgym-harbor-logs-")
        self._logs.append(logs)
        for path, data in found.items():
            Path(logs, os.path.basename(path)).write_bytes(data)
        self.stages["verifier"] = dict(self.verifier.stages)
        sandbox_result = SandboxResult(
            exit_code=-9 if result.timed_out else result.exit_code,
            output=result.output,
            output_truncated=result.output_truncated,
            timed_out=result.timed_out,
            duration=result.duration,
            sandbox=self.provider.name,
        )
        return sandbox_result, logs

    def _verifier_context(self) -> BuildContext | None:
        folder = Path(self.task.path) / "tests"
        if (folder / "Dockerfile").is_file():
            return BuildContext(folder, image_map=self.image_map)
        return None

    def _agent_workdir_tar(self) -> bytes | None:
        export = getattr(self.agent, "export_folder", None)
        if export is None:
            raise SandboxInfraError(
                f"the {self.provider.name} provider cannot carry a folder to a tests/Dockerfile image"
            )
        return export(self.workdir)  # type: ignore[no-any-return]

    def _put_tar(self, sandbox: RunningSandbox, archive: bytes) -> None:
        sandbox.import_folder(archive, os.path.dirname(self.workdir))  # type: ignore[attr-defined]

    def _read_tests(self, tests_dir: Path) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        total = 0
        for path in sorted(Path(tests_dir).rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            total += len(data)
            if total > _MAX_TESTS_BYTES:
                raise SandboxInfraError(f"{tests_dir}: the tests pass {_MAX_TESTS_BYTES >> 20} MiB")
            files[path.relative_to(tests_dir).as_posix()] = data
        return files

    # -- the end ------------------------------------------------------------------------

    def _retire_agent(self) -> None:
        if self.agent is not None:
            self.agent.destroy()
            self.stages["agent"] = dict(self.agent.stages)
            self.agent = None

    def close(self) -> None:
        """Remove both containers, the frozen images and the copied logs (idempotent)."""
        self._retire_agent()
        if self.verifier is not None:
            self.verifier.destroy()
            self.verifier = None
        for image in self._images:
            try:
                self.provider.drop_snapshot(image)
            except SandboxInfraError:
                pass
        self._images.clear()
        for folder in self._logs:
            _remove_tree(folder)
        self._logs.clear()
