"""Sandboxes: one small contract, many backends (bubblewrap, Docker/podman, remote services).

A :class:`SandboxProvider` creates a :class:`RunningSandbox` from an image or a build context
(a folder with a Dockerfile, built once and cached by content hash); the sandbox runs commands
with limits and a deadline, copies files in and out, snapshots where the backend can, and is
destroyed. Providers register through the ``rolloutgym_sandboxes`` hook (a
:class:`~rolloutgym_protocol.SandboxProviderSpec`, like envs and policies) or
:func:`register_provider`; :func:`get_provider` finds one by name::

    from rolloutgym.sandboxes import BuildContext, ResourceLimits, get_provider

    provider = get_provider("docker", host="unix:///run/podman/podman.sock")
    image = provider.build(BuildContext(Path("task/environment"), image_map={"python:3.11-slim": "localhost/rg-base"}))
    with provider.create(image=image, limits=ResourceLimits(cpus=1, memory_bytes=512 << 20)) as box:
        box.write_files({"main.py": b"print(6 * 7)"}, "/app")
        result = box.exec(["python3", "main.py"], workdir="/app", timeout=10)
        assert result.output == "42\\n"
        files = box.read_files(["/app/main.py"])

Every failure of the infrastructure (engine down, image missing offline, a Dockerfile that does
not build, a quota) raises :class:`SandboxInfraError` with one line naming the fix: an episode
that meets one is an error, never a reward of 0. What the agent's commands do (exit status,
deadline passed) is an :class:`ExecResult`.

:func:`run_isolated` is the one-shot form for a trusted process that must execute code it did not
write (a platform worker running a pushed env file): bubblewrap, an unprivileged uid, an
allow-listed filesystem, no inherited environment (:class:`Isolation`).
"""

from __future__ import annotations

from ._contract import (
    LABEL,
    BuildContext,
    ExecResult,
    ResourceLimits,
    RunningSandbox,
    SandboxInfraError,
    SandboxProvider,
    SandboxUnsupported,
    StageTimes,
)
from ._registry import available_providers, get_provider, register_provider
from .credential_proxy import CredentialProxy
from .isolated import IsolatedResult, Isolation, isolation_problem, run_isolated

__all__ = [
    "LABEL",
    "BuildContext",
    "CredentialProxy",
    "ExecResult",
    "IsolatedResult",
    "Isolation",
    "ResourceLimits",
    "RunningSandbox",
    "SandboxInfraError",
    "SandboxProvider",
    "SandboxUnsupported",
    "StageTimes",
    "available_providers",
    "get_provider",
    "isolation_problem",
    "register_provider",
    "run_isolated",
]
