"""rolloutgym-browser: browser environments with a local site, a pure-Python DOM backend and Chromium.

.. code-block:: python

    import rolloutgym as rg
    env = rg.make("browser/shop-v0", task=0, backend="chromium")   # an AsyncEnv
"""

from ._backend import Backend, BrowserError
from ._model import Element, Page, Snapshot, SnapshotElement, format_snapshot
from ._service import shutdown_browser
from ._site import Site, SiteApp
from .envs import BACKENDS, BrowserEnv, BrowserTask, EpisodeOutcome, grade_with_ground_truth, make_backend

__all__ = [
    "BACKENDS",
    "Backend",
    "BrowserEnv",
    "BrowserError",
    "BrowserTask",
    "Element",
    "EpisodeOutcome",
    "Page",
    "Site",
    "SiteApp",
    "Snapshot",
    "SnapshotElement",
    "format_snapshot",
    "grade_with_ground_truth",
    "make_backend",
    "shutdown_browser",
]
