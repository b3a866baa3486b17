"""Finding a provider by name: registered in this process, or by a plugin's ``rolloutgym_sandboxes`` hook."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rolloutgym_protocol.errors import did_you_mean

from ..registry import get_registry, import_entry_point
from ._contract import SandboxInfraError, SandboxProvider

__all__ = ["available_providers", "get_provider", "register_provider"]

_REGISTERED: dict[str, Callable[..., SandboxProvider]] = {}


def register_provider(name: str, factory: Callable[..., SandboxProvider]) -> None:
    """Make ``get_provider(name, **options)`` return ``factory(**options)`` in this process."""
    _REGISTERED[name] = factory


def available_providers() -> list[str]:
    """Every provider name ``get_provider`` accepts (registered here or by an installed plugin)."""
    return sorted({*_REGISTERED, *get_registry().sandbox_specs()})


def get_provider(name: str | SandboxProvider, **options: Any) -> SandboxProvider:
    """A provider, checked: ``get_provider("docker", host="unix:///run/podman/podman.sock")``.

    A provider object is returned as it is.

    Raises:
        SandboxInfraError: no provider of that name (the message lists them), or it cannot run
            here (the message names what is missing and the fix).
    """
    if isinstance(name, SandboxProvider):
        return name
    factory: Callable[..., SandboxProvider] | None = _REGISTERED.get(name)
    if factory is None:
        specs = get_registry().sandbox_specs()
        if name not in specs:
            names = available_providers()
            raise SandboxInfraError(
                f"no sandbox provider {name!r}.{did_you_mean(name, names)} Available: {', '.join(names) or 'none'}."
            )
        factory = import_entry_point(specs[name].spec.entry_point, what=f"sandbox provider {name}")
    provider = factory(**options)
    try:
        provider.check()
    except BaseException:
        provider.close()
        raise
    return provider
