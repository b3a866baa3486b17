"""The shared, read-only empty dict that records hold in place of an empty dict of their own.

Tens of thousands of trajectories in memory each had their own empty ``info``,
``initial_info``, ``policy_info`` and empty ``Score`` components and metadata: 64 bytes
each. Records built by the engine (and every ``Score``) point at :data:`SHARED_EMPTY`
instead. It is a ``dict`` for every reader (``isinstance``, ``==``, ``repr``, ``json``,
``dict(...)``, ``|``); only writing to it raises, naming the fix. It pickles and copies as
itself, so Ray workers and ``copy.deepcopy`` hand back the same object.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["SHARED_EMPTY"]


class _SharedEmptyDict(dict):  # type: ignore[type-arg]
    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[misc]
        # Code that rebuilds a mapping as type(value)(items) (dataclasses.asdict does) gets a
        # plain dict of its own, not a second read-only one.
        return dict(*args, **kwargs)

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "this empty mapping is shared by many records and is read-only; "
            "build a dict of your own instead (e.g. info = dict(step.info))"
        )

    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment]
    setdefault = update = pop = popitem = clear = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> str:
        return "SHARED_EMPTY"  # pickle and copy refer to the module's one instance


SHARED_EMPTY: dict[str, Any] = dict.__new__(_SharedEmptyDict)
