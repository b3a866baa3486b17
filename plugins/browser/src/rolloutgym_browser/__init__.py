"""rolloutgym-browser: browser environments with a local site, a pure-Python DOM backend and Chromium.

.. code-block:: python

    import rolloutgym as rg
    env = rg.make("browser/shop-v0", task=0, backend="chromium")   # an AsyncEnv
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._backend import Backend, BrowserError
    from ._model import Element, Page, Snapshot, SnapshotElement, format_snapshot
    from ._service import shutdown_browser
    from ._site import Site, SiteApp
    from ._task import BrowserTask, EpisodeOutcome, grade_with_ground_truth
    from .envs import BACKENDS, BrowserEnv, make_backend
    from .grading import answer_matches, diff_values, grade_episode, lookup_path

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_backend": ["Backend", "BrowserError"],
        "_model": ["Element", "Page", "Snapshot", "SnapshotElement", "format_snapshot"],
        "_service": ["shutdown_browser"],
        "_site": ["Site", "SiteApp"],
        "_task": ["BrowserTask", "EpisodeOutcome", "grade_with_ground_truth"],
        "envs": ["BACKENDS", "BrowserEnv", "make_backend"],
        "grading": ["answer_matches", "diff_values", "grade_episode", "lookup_path"],
    },
)
