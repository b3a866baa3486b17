"""The core's sandbox providers, registered like any plugin's (hook ``rolloutgym_sandboxes``)."""

from __future__ import annotations

from rolloutgym_protocol import SandboxProviderSpec, hookimpl


@hookimpl
def rolloutgym_sandboxes() -> list[SandboxProviderSpec]:
    return [
        SandboxProviderSpec(
            name="docker",
            entry_point="rolloutgym.sandboxes.docker:DockerProvider",
            description=(
                "Any Docker Engine API endpoint (Docker, or podman's `podman system service`): images built from a "
                "task's build context, cgroup limits, no network unless asked, an unprivileged user, labelled for "
                "the reaper. Endpoint: DOCKER_HOST or --sandbox-option host=unix:///path/to.sock."
            ),
            capabilities=("image", "build", "snapshot", "network"),
        ),
        SandboxProviderSpec(
            name="daytona",
            entry_point="rolloutgym.sandboxes.daytona:DaytonaProvider",
            description=(
                "Daytona's sandbox service through its official API clients (extra 'daytona'): sandboxes past one "
                "machine, a concurrency cap, retries with backoff, quota errors as infrastructure failures. "
                "DAYTONA_API_KEY, DAYTONA_API_URL."
            ),
            capabilities=("image", "network"),
        ),
        SandboxProviderSpec(
            name="e2b",
            entry_point="rolloutgym.sandboxes.e2b:E2BProvider",
            description=(
                "E2B's sandbox service over its documented wire format (httpx; extra 'e2b'): templates as images, "
                "a concurrency cap, retries with backoff, quota errors as infrastructure failures. "
                "E2B_API_KEY, E2B_DOMAIN."
            ),
            capabilities=("image", "network"),
        ),
    ]
