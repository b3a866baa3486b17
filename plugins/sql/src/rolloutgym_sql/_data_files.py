"""Reading the task files shipped in the package's ``data/`` folder."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["read_jsonl"]


def read_jsonl(name: str) -> list[dict[str, Any]]:
    """The objects of ``data/<name>`` (JSON Lines), in file order."""
    text = resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
