"""The backend interface shared by ``dom`` and ``chromium``.

The environment validates every action against the current :class:`Snapshot` before a
backend sees it, so a backend only performs well-formed actions on elements that exist
and accept them. Backends never grade: grading reads the site's server-side state.
"""

from __future__ import annotations

import abc
from urllib.parse import quote_plus

from rolloutgym_protocol.errors import RolloutGymError

from ._model import Snapshot
from ._site import SiteApp

__all__ = ["Backend", "BrowserError", "encode_form"]


class BrowserError(RolloutGymError, RuntimeError):
    """The browser is missing, crashed or stopped answering (an environment error)."""


def encode_form(pairs: list[tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded`` exactly as browsers write it (``~`` escaped, ``*`` kept)."""
    return "&".join(
        f"{quote_plus(name, safe='*').replace('~', '%7E')}={quote_plus(value, safe='*').replace('~', '%7E')}"
        for name, value in pairs
    )


class Backend(abc.ABC):
    """Drives one episode's page; ``start`` is called on every reset."""

    name: str = "backend"

    @abc.abstractmethod
    async def start(self, app: SiteApp, url: str) -> None:
        """Begin an episode on ``app`` and open ``url`` (site-relative)."""

    @abc.abstractmethod
    async def open(self, url: str) -> None:
        """Navigate to the site-relative ``url`` (GET)."""

    @abc.abstractmethod
    async def snapshot(self) -> Snapshot:
        """The current page."""

    @abc.abstractmethod
    async def click(self, element_id: str, *, navigates: bool) -> None:
        """Click an element; ``navigates`` says whether a page load follows."""

    @abc.abstractmethod
    async def fill(self, element_id: str, text: str) -> None:
        """Replace a textbox's value."""

    @abc.abstractmethod
    async def select(self, element_id: str, value: str) -> None:
        """Choose the option with ``value`` in a select."""

    @abc.abstractmethod
    async def set_checked(self, element_id: str, checked: bool) -> None:
        """Check or uncheck a checkbox."""

    async def scroll(self, lines: int) -> None:  # noqa: B027 - optional
        """Scroll the viewport (the text view is scrolled by the environment)."""

    async def screenshot(self) -> bytes | None:
        """A PNG of the viewport, when the backend has one."""
        return None

    @property
    def blocked_requests(self) -> list[str]:
        """Requests to other origins that were blocked during this episode."""
        return []

    @abc.abstractmethod
    async def stop(self) -> None:
        """End the episode (release its page/context). Safe to call twice."""

    async def close(self) -> None:
        """Release everything. Safe to call twice."""
        await self.stop()
