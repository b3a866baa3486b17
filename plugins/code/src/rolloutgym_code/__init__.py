"""rolloutgym-code: code-editing environments whose hidden tests run in a real sandbox."""

from .sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    available_sandboxes,
    get_sandbox,
    register_sandbox,
)

__all__ = [
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "available_sandboxes",
    "get_sandbox",
    "register_sandbox",
]
