"""The ``code-editing`` config shape, checked when an ``Environment`` is built (the template's ``validator``).

Only the SDK's keys are checked here; the plugin's own keys (``limits``, ``visible_tests``, ...)
are checked when the template compiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict
from rolloutgym.declarative.shapes import join_errors, validate_model
from rolloutgym_protocol.errors import EnvFileError

__all__ = ["CodeEditingConfig", "validate_code_editing"]


class CodeEditingConfig(BaseModel):
    """``code-editing`` config: ``files`` (path -> content). Extra keys belong to the compiler."""

    model_config = ConfigDict(extra="allow", frozen=True)
    files: dict[str, str]
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


def validate_code_editing(config: Mapping[str, Any], prefix: str = "config") -> dict[str, Any]:
    """Check a ``code-editing`` config and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    _, errors = validate_model(CodeEditingConfig, config, prefix)
    if errors:
        raise EnvFileError(join_errors(errors))
    return dict(config)
