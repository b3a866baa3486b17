"""The reasoning-gym generators served, by family, as plain tables (no import of reasoning_gym).

Listing (``rolloutgym list``) reads these tables only; ``tests/test_rg_catalogue.py`` checks them
against the installed package's registry (``reasoning_gym.factory.DATASETS``: every generator
is either served under its family or excluded with a reason).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
from importlib import resources

__all__ = [
    "EXCLUDED",
    "FAMILIES",
    "INSTALL_HINT",
    "LICENCE",
    "METADATA_ORACLE",
    "OWN_GRADE",
    "PACKAGE",
    "PINNED",
    "SLOW",
    "family_generators",
    "package_version",
]

PACKAGE = "reasoning-gym"
PINNED = "0.1.25"
LICENCE = "Apache-2.0"
# No square brackets: the CLI prints messages through rich, which would take them for markup.
INSTALL_HINT = f"install the reasoning-gym extra of rolloutgym-benchmarks (pip install {PACKAGE}=={PINNED})"

# family -> generators, as reasoning-gym files them (its module folders): data/rg_families.json.
FAMILIES: dict[str, tuple[str, ...]] = {
    family: tuple(names)
    for family, names in json.loads(resources.files(__package__).joinpath("data/rg_families.json").read_text()).items()
}

# Registered in reasoning-gym but not served, and why.
EXCLUDED: dict[str, str] = {
    "composite": "reasoning-gym's own weighted mixture of other generators, not a generator (rg/mixture-v0 is ours)",
    "boxnet": "its entries carry no reference answer (answer None, none in the metadata): no oracle, no gold check",
    "rush_hour": "its entries carry no reference answer (answer None, none in the metadata): no oracle, no gold check",
}

# Generators whose entry "answer" is None (the scorer rejects it: rubiks_cube scores its own
# reference 0.0) but whose metadata holds an accepted solution: metadata key, JSON-encode it.
METADATA_ORACLE: dict[str, tuple[str, bool]] = {
    "graph_color": ("possible_answer", True),
    "propositional_logic": ("example_answer", False),
    "rubiks_cube": ("example_correct_answer", False),
}

# Generators whose scorer accepts wrong answers, graded here by exact (case-insensitive) match
# with the reference instead, and why.
OWN_GRADE: dict[str, str] = {
    "game_of_life_halting": "its scorer tests bool(answer) == bool(reference) on strings, so every non-empty reply "
    "(even 'False' when the reference is 'True') scores 1.0",
}

# Generators taking over 0.1 s per problem on a 2-core machine (benchmarks/reasoning_gym_oracle.py).
SLOW: frozenset[str] = frozenset(
    {
        "acre",
        "futoshiki",
        "intermediate_integration",
        "knight_swap",
        "puzzle24",
        "quantum_lock",
        "sokoban",
        "zebra_puzzles",
    }
)


def family_generators(family: str) -> tuple[str, ...]:
    """The generators of ``family`` (``mixture``: every served generator)."""
    if family == "mixture":
        return tuple(sorted(name for names in FAMILIES.values() for name in names))
    return FAMILIES[family]


@functools.cache
def package_version() -> str | None:
    """The installed reasoning-gym version, or None (reads metadata only, once per process:
    every graded reply names it)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
