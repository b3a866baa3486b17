"""rolloutgym-workflow: the ``workflow`` and ``custom`` templates and ``workflow/refund-v0``."""

from __future__ import annotations

import importlib
from typing import Any

# Lazy re-exports (PEP 562): `rolloutgym list` imports this package's plugin module, which
# imports this package first, so nothing heavy may be imported here.
_EXPORTS = {
    "Program": ".template",
    "WorkflowEnv": ".envs",
    "compile_custom": ".template",
    "compile_program": ".template",
    "compile_workflow": ".template",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
