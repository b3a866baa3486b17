"""Read-only HTML pages of the platform (filled in below)."""

from __future__ import annotations

from typing import Any


def page_routes() -> list[Any]:
    return []
