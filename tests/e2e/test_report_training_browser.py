"""Training curves in a real browser: headless Debian Chromium driven by Playwright.

A report of a run file and a training log opens on the run; the ``training`` tab (and the
``#training`` link) shows the curves; a report of training logs alone opens on them. No
script error, no network. Under ``CI=true`` a missing Chromium or Playwright fails the test.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import rolloutgym as rg

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

pytestmark = [pytest.mark.chromium]


def _require_browser() -> None:
    missing = [name for name in ("playwright", "matplotlib") if importlib.util.find_spec(name) is None]
    reason = f"not installed: {', '.join(missing)}" if missing else None
    if reason is None and not CHROMIUM.exists():
        reason = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the training-report browser test needs a browser under CI: {reason}")
        pytest.skip(reason)


def _log(path: Path) -> Path:
    lines = [{"rolloutgym_training_log": 1, "trainer": "grpo"}]
    lines += [{"step": step, "reward": step / 4, "loss": 1 - step / 4} for step in range(1, 5)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_training_tab_and_link_show_the_curves(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright
    from rolloutgym.report import build_report

    run = tmp_path / "guess.jsonl"
    rg.run("toy/guess-v0", policy="oracle", limit=2, out=run)
    log = _log(tmp_path / "training_log.jsonl")
    mixed = build_report([run, log], tmp_path / "mixed.html").path
    alone = build_report([log], tmp_path / "alone.html").path
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        context = browser.new_context(offline=True)
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(mixed.as_uri())
        assert page.locator("#run-0").is_visible() and not page.locator("#training").is_visible()
        page.locator('header.top nav button[data-view="training"]').click()
        assert page.locator("#training").is_visible() and not page.locator("#run-0").is_visible()
        assert page.locator("#training figure[data-metric] svg").count() == 2  # reward, loss
        page.goto(mixed.as_uri() + "#training")
        page.reload()
        assert page.locator("#training").is_visible()
        page.goto(alone.as_uri())
        assert page.locator("#training").is_visible()
        assert page.locator('#training figure[data-metric="reward"] svg').is_visible()
        context.close()
        browser.close()
    assert not problems, problems
