"""Gymnasium vector envs of rolloutgym envs: ``gymnasium.make_vec(ENV_ID, num_envs=N)``.

:func:`register_gymnasium` registers :func:`make_vector` as every env's
``vector_entry_point``, so ``make_vec`` builds one of these by default:

* **info values of differing types.** Gymnasium batches each ``info`` value into an array
  typed by the first member's value; a grader's ``extracted`` that is an int in one
  member and ``None`` in another (or an int then a float, or text) then crashes the step
  or truncates silently. Here such a batch turns into an object array, keeping every
  member's value as it is; values of one type are batched as Gymnasium does.
* **text spaces and async vectors.** Gymnasium's shared memory holds numeric arrays only,
  so an ``AsyncVectorEnv`` over text or chat spaces fails with it. ``mode="async"`` here
  turns shared memory off (observations travel through the worker pipes instead);
  ``shared_memory=True`` is refused with what to do.

``gymnasium.make_vec(ENV_ID, num_envs=N, mode="async")`` picks the async vector;
``vectorization_mode="sync"``/``"async"`` bypass this module and give Gymnasium's own
classes, with the two limits above.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

__all__ = ["RolloutGymAsyncVectorEnv", "RolloutGymSyncVectorEnv", "make_vector"]


def _add_info(self: Any, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
    """Gymnasium's ``VectorEnv._add_info``, with a batch of mixed types held in an object array."""
    for key, value in env_info.items():
        if isinstance(value, dict) and key != "final_obs":
            array: Any = _add_info(self, vector_infos.get(key, {}), value, env_num)
        else:
            array = vector_infos.get(key)
            if array is None:
                array = _empty_batch(value, self.num_envs) if key != "final_obs" else _objects(self.num_envs)
            elif array.dtype != object and not _fits(array, value):
                typed = array
                array = _objects(self.num_envs)
                filled = vector_infos.get(f"_{key}", np.zeros(self.num_envs, dtype=np.bool_))
                for index in np.flatnonzero(filled):
                    array[index] = typed[index].item() if typed.ndim == 1 else typed[index]
            array[env_num] = value
        mask = vector_infos.get(f"_{key}", np.zeros(self.num_envs, dtype=np.bool_))
        mask[env_num] = True
        vector_infos[key], vector_infos[f"_{key}"] = array, mask
    return vector_infos


def _objects(size: int) -> np.ndarray:
    return np.full(size, fill_value=None, dtype=object)


def _empty_batch(value: Any, size: int) -> np.ndarray:
    if type(value) in (int, float, bool) or isinstance(value, np.number):
        return np.zeros(size, dtype=type(value))
    if isinstance(value, np.ndarray):
        return np.zeros((size, *value.shape), dtype=value.dtype)
    return _objects(size)


def _fits(array: np.ndarray, value: Any) -> bool:
    """Whether ``value`` goes into the typed batch ``array`` unchanged."""
    if isinstance(value, np.ndarray):
        return value.shape == array.shape[1:] and value.dtype == array.dtype
    if array.ndim != 1:
        return False
    if isinstance(value, np.number):
        return bool(value.dtype == array.dtype)
    return type(value) is type(array.dtype.type(0).item())


class RolloutGymSyncVectorEnv(SyncVectorEnv):
    """``SyncVectorEnv`` whose info batches hold values of differing types (see the module)."""

    _add_info = _add_info


class RolloutGymAsyncVectorEnv(AsyncVectorEnv):
    """``AsyncVectorEnv`` without shared memory by default, and info batches of differing types."""

    _add_info = _add_info


def make_vector(env_id: str, num_envs: int, *, mode: str = "sync", shared_memory: bool = False, **kwargs: Any) -> Any:
    """A vector of ``num_envs`` copies of ``gymnasium.make(env_id, **kwargs)`` (``mode``: sync or async)."""
    if mode not in ("sync", "async"):
        raise ValueError(f"mode must be 'sync' or 'async', got {mode!r}")
    if shared_memory:
        raise ValueError(
            "shared_memory=True: Gymnasium's shared memory holds numeric arrays only, and rolloutgym envs observe "
            "text and chat messages; leave it off (observations travel through the worker pipes)"
        )
    kwargs.pop("max_episode_steps", None)  # gymnasium.make applies the registered limit itself

    def member() -> Any:
        return gymnasium.make(env_id, **kwargs)

    if mode == "async":
        return RolloutGymAsyncVectorEnv([member] * num_envs, shared_memory=False)
    return RolloutGymSyncVectorEnv([member] * num_envs)
