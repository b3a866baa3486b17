"""The conformance kit on ``browser/shop-v0``, with both backends."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from rolloutgym_browser.testing import require_chromium
from rolloutgym_testing import EnvConformanceTests


class TestShopDom(EnvConformanceTests):
    env_id = "browser/shop-v0"


@pytest.mark.chromium
class TestShopChromium(EnvConformanceTests):
    env_id = "browser/shop-v0"
    env_kwargs: ClassVar[dict[str, Any]] = {"backend": "chromium"}
    # Every task runs on Chromium in test_browser_backends.py (same trajectory, same score);
    # here the kit's checks run on a few tasks to keep the suite's time modest.
    max_tasks = 4

    @pytest.fixture(autouse=True)
    def _needs_chromium(self) -> None:
        require_chromium()
