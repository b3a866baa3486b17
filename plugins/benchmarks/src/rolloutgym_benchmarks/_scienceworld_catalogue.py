"""ScienceWorld's task table and package facts, for listings that start no JVM and import nothing of the env."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ._loading import installed_version

__all__ = [
    "CATALOGUE",
    "INSTALL_HINT",
    "LICENCE",
    "PACKAGE",
    "PINNED",
    "SPLITS",
    "STEP_LIMIT",
    "loader_name",
    "package_version",
]

PACKAGE = "scienceworld"
PINNED = "1.2.3"
LICENCE = "Apache-2.0"
STEP_LIMIT = 100  # ScienceWorldEnv's envStepLimit default
INSTALL_HINT = (
    f"install the scienceworld extra of rolloutgym-benchmarks (pip install {PACKAGE}=={PINNED}) and Java 17 "
    "(Debian: apt-get install openjdk-17-jre-headless)"
)
SPLITS = ("train", "dev", "test")
CATALOGUE: dict[str, dict[str, Any]] = json.loads(
    resources.files(__package__).joinpath("data/scienceworld_tasks.json").read_text(encoding="utf-8")
)["tasks"]


def package_version() -> str | None:
    return installed_version(PACKAGE)


def loader_name(task_name: str) -> str:
    return "tasks_" + task_name.replace("-", "_")
