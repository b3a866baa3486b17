"""IFEval's package facts, for listings that import nothing of the env (issue 46)."""

from __future__ import annotations

from ._loading import installed_version

__all__ = ["INSTALL_HINT", "LICENCE", "PACKAGE", "PINNED", "package_version"]

PACKAGE = "if-verifiable"
PINNED = "0.1.2"
LICENCE = "Apache-2.0 (if-verifiable and IFEval's checkers); the prompts are rolloutgym's own (MIT)"
INSTALL_HINT = f"install the ifeval extra of rolloutgym-benchmarks (pip install {PACKAGE}=={PINNED})"


def package_version() -> str | None:
    return installed_version(PACKAGE)
