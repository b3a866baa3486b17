"""Which scored episodes training leaves out for their attribution (``rolloutgym_protocol.attribution``)."""

from __future__ import annotations

from collections.abc import Sequence

from rolloutgym_protocol.attribution import NON_AGENT_PARTIES, PARTIES
from rolloutgym_protocol.errors import ConfigError

__all__ = ["DEFAULT_MASKED", "checked_parties"]

DEFAULT_MASKED = ",".join(sorted(NON_AGENT_PARTIES, key=PARTIES.index))
"""``user,env,grader``: what ``--mask-attributed`` leaves out by default."""


def checked_parties(value: str | Sequence[str] | None) -> frozenset[str]:
    """``"user,env"``, ``["user"]``, ``"none"`` or ``None`` as a set of parties; a clear error for a wrong one."""
    if value is None:
        return frozenset()
    names = [part.strip() for part in value.split(",")] if isinstance(value, str) else [str(part) for part in value]
    names = [name for name in names if name and name != "none"]
    unknown = [name for name in names if name not in PARTIES]
    if unknown:
        raise ConfigError(
            f"--mask-attributed: unknown part{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}; "
            f"use a comma-separated list of {', '.join(PARTIES)} (default {DEFAULT_MASKED}), or 'none'"
        )
    return frozenset(names)
