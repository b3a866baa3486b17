"""``browser/miniwob-v0``: the MiniWoB++ benchmark from the ``miniwob`` package, on Chromium.

Every task of ``miniwob`` 1.1.0 (the 125 of its gymnasium registration) is one task item;
the seed picks the episode (``Math.seedrandom(seed)`` before ``core.startEpisodeReal()``,
as the package's own driver does), the page's JavaScript writes the instruction (the
utterance) and computes the reward. Needs ``pip install 'rolloutgym-browser[miniwob]'``
and Chromium; the ``dom`` backend cannot run the pages' JavaScript and refuses this env.

Observation and actions are those of ``browser/shop-v0`` (chat messages; the page as an
accessibility-tree text with element ids; the tools ``click``, ``type``, ``select``,
``check``, ``scroll``, ``answer``) plus three tools MiniWoB needs: ``click_at`` (x, y),
``drag`` (from, to) and ``press_key``. ``goto``/``back`` are not offered: a task is one page.

Reward: the page's raw reward (``WOB_RAW_REWARD_GLOBAL``: -1 to 1, partial for some tasks),
i.e. ``miniwob.reward.get_raw_reward``, without the wall-clock time penalty of the package's
default (a language model's thinking time is not the benchmark's reaction time). An episode
the agent ends before the page is done is ended as the page's own timer ends it:
``core.endEpisode(-1)``, reward -1, the environment's minimum.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._miniwob_server import MINIWOB_INSTALL_HINT, miniwob_html_root

__all__ = ["MINIWOB_INSTALL_HINT", "MiniWoBTask", "make_miniwob_env", "miniwob_html_root", "miniwob_tasks"]

TASK_FILE = Path(__file__).with_name("data") / "miniwob_tasks.jsonl"
#: The package version the task list and the scripted solutions were written against.
MINIWOB_VERSION = "1.1.0"


@dataclass(frozen=True)
class MiniWoBTask:
    """One MiniWoB++ task (a page of the ``miniwob`` package).

    Attributes:
        id: the task name, e.g. ``click-button`` (the package's env id without ``miniwob/``, ``-v1``).
        split: ``test`` (MiniWoB++ has no task split; seeds pick episodes).
        file: the page under ``miniwob/html/miniwob/``.
        needs: how it is played: ``elements`` (element ids suffice), ``coordinates``
            (``click_at``), ``drag``, ``keyboard`` (``press_key``), ``scroll``.
        scripted: whether the oracle has a scripted solution for it.
    """

    id: str
    split: str
    file: str
    needs: tuple[str, ...]
    scripted: bool


@cache
def _load() -> tuple[MiniWoBTask, ...]:
    from ._data_files import miniwob_task_records
    from ._miniwob_oracle import SCRIPTED

    return tuple(
        MiniWoBTask(
            id=record.id, split=record.split, file=record.file, needs=record.needs, scripted=record.id in SCRIPTED
        )
        for record in miniwob_task_records()
    )


def miniwob_tasks() -> list[MiniWoBTask]:
    """The 125 tasks (read from a small JSON file; imports neither ``miniwob`` nor Playwright)."""
    return list(_load())


def miniwob_version() -> str | None:
    """The installed ``miniwob`` version (None when it is not installed)."""
    try:
        return importlib.metadata.version("miniwob")
    except importlib.metadata.PackageNotFoundError:
        return None


def _resolve(task: MiniWoBTask | str | int | None) -> MiniWoBTask:
    tasks = _load()
    if task is None:
        return tasks[0]
    if isinstance(task, MiniWoBTask):
        return task
    if isinstance(task, int) and not isinstance(task, bool):
        if not 0 <= task < len(tasks):
            raise ConfigError(f"browser/miniwob-v0 has {len(tasks)} tasks (0-{len(tasks) - 1}); got task={task}")
        return tasks[task]
    if isinstance(task, str):
        name = task.removeprefix("miniwob/").removesuffix("-v1")
        for item in tasks:
            if item.id == name:
                return item
        import difflib

        close = difflib.get_close_matches(name, [item.id for item in tasks], n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(
            f"no MiniWoB task {task!r}.{hint} Run 'rolloutgym info browser/miniwob-v0' to list the tasks."
        )
    raise ConfigError(f"a MiniWoB task is a name, an index or a MiniWoBTask; got {type(task).__name__}")


def make_miniwob_env(task: MiniWoBTask | str | int | None = None, **kwargs: Any) -> Any:
    """A ``browser/miniwob-v0`` environment for ``task`` (a :class:`MiniWoBTask`, its name or index).

    Keyword arguments go to :class:`~rolloutgym_browser._miniwob_env.MiniWoBEnv`:
    ``backend`` (only ``"chromium"``), ``screenshot=True``, ``viewport=60``, ``chromium_path``.

    Raises:
        ConfigError: ``miniwob`` is not installed (naming the extra) or the backend is ``dom``.
    """
    from ._miniwob_env import MiniWoBEnv

    return MiniWoBEnv(_resolve(task), **kwargs)
