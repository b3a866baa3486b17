"""The code envs' sandbox on a container provider: ``--sandbox docker`` for ``code/*``.

Each :meth:`ContainerSandbox.run` is one container of :mod:`rolloutgym.sandboxes` (a warm pool
hides its start where ``ROLLOUTGYM_SANDBOX_POOL`` asks for one): the workspace files are copied
into ``/workspace`` (a size-capped tmpfs), the trusted files (hidden tests, the guard, the ini)
into ``/tmp/rolloutgym-trusted`` owned by root and read-only to the code's uid, the command runs
as uid 1000 with the sandbox's deadline, the collected files are read back (never through a
link), and the container is removed.

What changes against bubblewrap (``docs/explanation/robustness.md`` states the bubblewrap
guarantees): this provider has no ``start()``, so grading runs the in-sandbox harness (the
authenticated verdict of :mod:`rolloutgym_code.testrun`) instead of the process boundary of
:mod:`rolloutgym_code._boundary`; memory and processes are bounded per container by cgroups
(``memory_bytes``, ``processes`` as the pids limit) instead of per-process rlimits
(``RLIMIT_AS``, ``RLIMIT_CPU``: the CPU limit is the wall-clock deadline); the filesystem is the
image's (``ROLLOUTGYM_SANDBOX_IMAGE``, default the project's base image with python3 and pytest)
read-only, not the host's ``/usr``. The network is off and the uid unprivileged, as with bubblewrap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._sandbox_types import SandboxLimits, SandboxResult, SandboxUnavailable

__all__ = ["ContainerSandbox"]

DEFAULT_IMAGE = "localhost/rolloutgym/bookworm-python:latest"


class ContainerSandbox:
    """A :class:`~rolloutgym_code.sandbox.Sandbox` over a :mod:`rolloutgym.sandboxes` provider.

    Args:
        provider: the provider's name (``docker``).
        image: the image commands run in (needs ``python3`` and ``pytest``).
        options: the provider's options (``host=...``); default ``DOCKER_HOST``.
    """

    workdir = "/workspace"
    trusted_dir = "/tmp/rolloutgym-trusted"
    python = "python3"

    def __init__(self, provider: str = "docker", *, image: str | None = None, **options: Any) -> None:
        self.name = provider
        self.image = image or os.environ.get("ROLLOUTGYM_SANDBOX_IMAGE") or DEFAULT_IMAGE
        pool = os.environ.get("ROLLOUTGYM_SANDBOX_POOL")
        if pool and "pool_size" not in options:
            options["pool_size"] = int(pool)
        if provider == "docker" and "host" not in options:  # the endpoint in the key of the shared provider
            from rolloutgym.sandboxes._engine import default_host

            options["host"] = default_host()
        self.options = options
        self._provider: Any = None

    def check(self) -> None:
        from rolloutgym.sandboxes import SandboxInfraError

        from ._harbor_container import shared_provider

        try:
            self._provider = shared_provider(self.name, self.options)
            if not self._provider.engine.image_exists(self.image):
                raise SandboxInfraError(
                    f"the image {self.image} is not on the engine: run scripts/build_base_images.sh, or set "
                    "ROLLOUTGYM_SANDBOX_IMAGE to an image with python3 and pytest"
                )
        except SandboxInfraError as exc:
            raise SandboxUnavailable(f"{self.name}: {exc}") from None

    def run(
        self,
        command: Sequence[str],
        *,
        files: Mapping[str, bytes],
        limits: SandboxLimits | None = None,
        collect: Sequence[str] = (),
        environment: Mapping[str, str] | None = None,
        trusted_files: Mapping[str, bytes] | None = None,
    ) -> SandboxResult:
        from rolloutgym.sandboxes import ResourceLimits

        if self._provider is None:
            self.check()
        limits = limits or SandboxLimits()
        started = time.monotonic()
        box = self._provider.create(
            image=self.image,
            workdir=self.workdir,
            limits=ResourceLimits(
                cpus=1.0, memory_bytes=limits.memory_bytes, pids=limits.processes, disk_bytes=limits.workspace_bytes
            ),
            env={"PYTHONDONTWRITEBYTECODE": "1", **(environment or {})},
        )
        try:
            box.write_files(dict(files), self.workdir)
            if trusted_files:
                box.write_files(dict(trusted_files), self.trusted_dir, user="root")
            result = box.exec(
                list(command),
                timeout=limits.wall_seconds,
                max_output_bytes=limits.keep_output_bytes,
            )
            found = box.read_files([f"{self.workdir}/{name}" for name in collect], max_bytes=limits.file_size_bytes)
        finally:
            box.destroy()
        collected = {path[len(self.workdir) + 1 :]: data for path, data in found.items()}
        exit_code = -9 if result.timed_out else (-9 if result.exit_code == 137 else result.exit_code)
        return SandboxResult(
            exit_code=exit_code,
            output=result.output,
            output_truncated=result.output_truncated,
            timed_out=result.timed_out,
            duration=time.monotonic() - started,
            files=collected,
            sandbox=self.name,
        )
