"""Building a registered env: its imported factory, the one tagger (:func:`tag_env`), the async adapter.

:meth:`rolloutgym.registry.Registry.env_builder` puts these together; env files and remote
envs are tagged by the same :func:`tag_env`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from rolloutgym_protocol import as_async
from rolloutgym_protocol.errors import SpecError

__all__ = ["adapt_env", "import_entry_point", "tag_env"]


def import_entry_point(value: str, *, what: str = "entry point") -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module_name, _, attribute = value.partition(":")
    module = importlib.import_module(module_name)
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise SpecError(f"{what} '{value}': module '{module_name}' has no attribute '{attribute}'") from None
    return target


def tag_env(environment: Any, env_id: str, identifier: str | None, *, what: str = "environment factory") -> Any:
    """Check a factory's result and record its env id and task id on it (``rolloutgym_env_id``/``_task_id``).

    The one place envs are tagged: registered ids, env files and remote envs alike.
    """
    if inspect.isawaitable(environment):
        close = getattr(environment, "close", None)
        if close is not None:
            close()
        raise TypeError(f"{what} returned an awaitable; factories must be sync")
    try:
        environment.rolloutgym_task_id = identifier
        environment.rolloutgym_env_id = env_id
    except AttributeError:
        pass
    return environment


def adapt_env(environment: Any, adapter: Callable[[Any], Any] = as_async) -> Any:
    """``adapter(environment)`` (``as_async``: an ``AsyncEnv`` for a sync env), keeping its env id and task id tags.

    The server passes its own adapter (sync envs' calls move onto the event loop once quick).
    """
    adapted = adapter(environment)
    if adapted is not environment:
        try:
            adapted.rolloutgym_task_id = getattr(environment, "rolloutgym_task_id", None)
            adapted.rolloutgym_env_id = getattr(environment, "rolloutgym_env_id", None)
        except AttributeError:
            pass
    return adapted
