"""The ``browser`` config shape, checked when an ``Environment`` is built (the template's ``validator``).

Only the outline is checked here (``initialUrl``, ``pages`` with ``url``/``title``/``elements``);
the element schema is checked when the template compiles (:func:`parse_browser_config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rolloutgym.declarative.shapes import join_errors, validate_model
from rolloutgym_protocol.errors import EnvFileError

__all__ = ["BrowserConfig", "BrowserPage", "validate_browser"]


class BrowserPage(BaseModel):
    """One page of the ``browser`` template; its elements are checked by the compiler."""

    model_config = ConfigDict(extra="allow", frozen=True)
    url: str = Field(min_length=1)
    title: str
    elements: list[Any]


class BrowserConfig(BaseModel):
    """``browser`` config: ``initialUrl`` and ``pages``. Extra keys belong to the compiler."""

    model_config = ConfigDict(extra="allow", frozen=True)
    initialUrl: str = Field(min_length=1)
    pages: list[BrowserPage] = Field(min_length=1)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


def validate_browser(config: Mapping[str, Any], prefix: str = "config") -> dict[str, Any]:
    """Check a ``browser`` config's outline and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    _, errors = validate_model(BrowserConfig, config, prefix)
    if errors:
        raise EnvFileError(join_errors(errors))
    return dict(config)
