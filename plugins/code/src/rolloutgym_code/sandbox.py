"""Sandboxes that run untrusted code: visible tests, hidden tests, anything the agent runs.

A sandbox is a *provider*: an object with ``run(command, files=..., limits=...)`` that ships
a set of files in, runs one command with them as its working directory, and returns a
:class:`SandboxResult` (exit code, capped output, limit flags, and the files asked for with
``collect``). Nothing the command writes reaches the caller except those collected files.
That small contract is all a container or remote sandbox has to implement; register one
with :func:`register_sandbox` or an entry point in group ``rolloutgym_code.sandboxes``.
A provider may also accept ``trusted_files=`` (files mounted read-only at its
``trusted_dir``, next to its ``workdir``): test runs then keep hidden tests out of the code's
reach; without it they travel inside the workspace. A provider with
``start(command, files=..., limits=...)`` (returning an object with ``to_sandbox`` and
``from_sandbox`` descriptors, ``release_channel()`` and ``close()``, like
:class:`rolloutgym_code._namespace_sandbox.SandboxProcess`) gets grading across the boundary:
hidden tests on the trusted side, the code under test behind a server in the sandbox.

The built-in providers, both Linux namespaces (:mod:`rolloutgym_code._bwrap_sandbox` and
:mod:`rolloutgym_code._unshare_sandbox`, over :mod:`rolloutgym_code._namespace_sandbox`):

* ``bwrap`` (preferred): bubblewrap with new network, PID, IPC and UTS namespaces, an empty
  root with read-only ``/usr`` (and the interpreter's prefix) bound in, a fresh size-limited
  ``/tmp``, the workspace as the only writable host directory, rlimits, a scrubbed
  environment and an unprivileged uid.
* ``unshare`` (fallback, needs root): ``unshare`` network/PID/mount/IPC/UTS namespaces and
  a private root like bubblewrap's (read-only ``/usr``, fresh ``/proc`` and ``/tmp``, the
  workspace), entered with ``chroot``; rlimits and a uid drop.

A third, ``docker`` (:mod:`rolloutgym_code._container_sandbox`), runs each command in a container
of the core's ``docker`` provider (:mod:`rolloutgym.sandboxes`; ``--sandbox docker``), with the
differences its docstring states. It is never picked by ``auto``.

``get_sandbox("auto")`` picks ``bwrap`` when it works, else ``unshare`` when running as
root, else raises :class:`SandboxUnavailable` saying what to install.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from ._sandbox_types import Sandbox, SandboxLimits, SandboxResult, SandboxUnavailable

__all__ = [
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "available_sandboxes",
    "get_sandbox",
    "register_sandbox",
]


_PROVIDERS: dict[str, Callable[[], Sandbox]] = {}
_ENTRY_POINT_GROUP = "rolloutgym_code.sandboxes"


def register_sandbox(name: str, factory: Callable[[], Sandbox]) -> None:
    """Make ``get_sandbox(name)`` build a sandbox with ``factory()``."""
    _PROVIDERS[name] = factory


def _builtin_providers() -> dict[str, Callable[[], Sandbox]]:
    from ._bwrap_sandbox import BubblewrapSandbox
    from ._container_sandbox import ContainerSandbox
    from ._unshare_sandbox import UnshareSandbox

    return {"bwrap": BubblewrapSandbox, "unshare": UnshareSandbox, "docker": ContainerSandbox}


@functools.cache
def _entry_point_providers() -> dict[str, Callable[[], Sandbox]]:
    """Providers from installed distributions (read once per process: scanning is slow)."""
    from importlib.metadata import entry_points

    found: dict[str, Callable[[], Sandbox]] = {}
    for entry_point in entry_points(group=_ENTRY_POINT_GROUP):
        found[entry_point.name] = lambda entry_point=entry_point: entry_point.load()()  # type: ignore[misc]
    return found


def available_sandboxes() -> list[str]:
    """Names ``get_sandbox`` accepts (``auto`` plus every registered provider)."""
    return ["auto", *sorted({**_builtin_providers(), **_entry_point_providers(), **_PROVIDERS})]


def get_sandbox(name: str | Sandbox | None = None) -> Sandbox:
    """Return a working sandbox provider.

    Args:
        name: a provider object (returned as is), a provider name, or ``None``/``"auto"``,
            which reads ``ROLLOUTGYM_SANDBOX`` and otherwise prefers ``bwrap`` then ``unshare``.

    Raises:
        SandboxUnavailable: the provider cannot run here; the message says why and what to install.
    """
    if name is not None and not isinstance(name, str):
        return name
    chosen = name or os.environ.get("ROLLOUTGYM_SANDBOX") or "auto"
    providers = {**_builtin_providers(), **_entry_point_providers(), **_PROVIDERS}
    if chosen == "auto":
        problems = []
        for candidate in ("bwrap", "unshare"):
            try:
                return _checked(providers[candidate]())
            except SandboxUnavailable as exc:
                problems.append(f"{candidate}: {exc}")
        raise SandboxUnavailable(
            "no sandbox can run untrusted code on this machine. "
            + " | ".join(problems)
            + " | Install bubblewrap (apt-get install bubblewrap) and Debian's python3 + python3-pytest."
        )
    if chosen not in providers:
        from rolloutgym_protocol.errors import did_you_mean

        raise SandboxUnavailable(
            f"no sandbox provider {chosen!r}.{did_you_mean(chosen, providers)} "
            f"Available: {', '.join(available_sandboxes())}."
        )
    return _checked(providers[chosen]())


def _checked(sandbox: Sandbox) -> Sandbox:
    check = getattr(sandbox, "check", None)
    if check is not None:
        check()
    return sandbox
