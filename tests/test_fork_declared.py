"""Every shipped env either forks (``EnvSpec.forkable``, checked by the kit's test_fork) or says why not."""

from __future__ import annotations

from rolloutgym.registry import get_registry


def test_every_registered_env_forks_or_says_why_not() -> None:
    silent = [spec.id for spec in get_registry().envs() if not spec.forkable and not spec.fork_note]
    assert not silent, f"envs that neither fork nor say why not (EnvSpec.fork_note): {silent}"
