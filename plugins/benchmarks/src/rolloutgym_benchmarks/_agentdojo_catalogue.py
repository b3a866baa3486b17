"""AgentDojo's suite table and package facts, for listings that import nothing of the env (issue 46)."""

from __future__ import annotations

from rolloutgym.install_hints import pip_install

from ._loading import installed_version

__all__ = [
    "BENCHMARK_VERSION",
    "LICENCE",
    "MAX_TOOL_REPLIES",
    "PACKAGE",
    "PINNED",
    "SUITES",
    "install_hint",
    "package_version",
]

PACKAGE = "agentdojo"
PINNED = "0.1.35"
BENCHMARK_VERSION = "v1.2.1"
LICENCE = "MIT"


def install_hint() -> str:
    """How to install AgentDojo: the plugin's extra from the checkout, or the light install."""
    return (
        f"install the agentdojo extra of rolloutgym-benchmarks ({pip_install('rolloutgym-benchmarks', 'agentdojo')}, "
        f"or pip install --no-deps {PACKAGE}=={PINNED} deepdiff email-validator cohere google-genai)"
    )


# suite -> (user tasks, injection tasks) in v1.2.1, for listings that import nothing.
SUITES: dict[str, tuple[int, int]] = {"workspace": (40, 14), "travel": (20, 7), "banking": (16, 9), "slack": (21, 5)}
MAX_TOOL_REPLIES = 15  # AgentDojo's ToolsExecutionLoop default (max_iters)


def package_version() -> str | None:
    return installed_version(PACKAGE)
