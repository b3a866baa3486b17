"""The report at 1,400 and 800 px on the largest shipped env (49 tasks): nothing clipped, no label pile-up.

Headless Debian Chromium through Playwright opens the report built by ``rolloutgym report``;
screenshots go to ``artifacts/report/layout-WIDTH.png``. Under ``CI=true`` a missing browser fails.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.chromium, pytest.mark.slow]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = None
    if (
        importlib.util.find_spec("playwright") is None
        or not CHROMIUM.exists()
        or importlib.util.find_spec("matplotlib") is None
    ):
        missing = "needs playwright, /usr/bin/chromium and matplotlib"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    folder = tmp_path_factory.mktemp("layout")
    run = folder / "refund.jsonl"
    command = [sys.executable, "-m", "rolloutgym"]
    subprocess.run(
        [*command, "run", "workflow/refund-v0", "--policy", "oracle", "-q", "-o", str(run)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    subprocess.run(
        [*command, "report", str(run), "-o", str(folder / "report.html")], check=True, timeout=300, capture_output=True
    )
    return folder / "report.html"


@pytest.mark.parametrize("width", [1400, 800])
def test_task_table_is_not_clipped_and_plot_labels_do_not_pile_up(report: Path, width: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 1600})
            page.goto(report.as_uri())
            page.wait_for_selector(".task-table table tbody tr")
            scroll = page.eval_on_selector(".task-table", "element => [element.scrollWidth, element.clientWidth]")
            assert scroll[0] <= scroll[1] + 1, (
                f"task table is {scroll[0]} px wide in a {scroll[1]} px pane at {width} px"
            )
            headers = page.eval_on_selector_all(
                ".task-table thead th", "cells => cells.map(cell => cell.textContent.trim())"
            )
            assert "errors" in " ".join(headers)
            plot = (
                page.inner_html("figure:has(svg[aria-label='pass rate per task'])")
                if page.query_selector("figure:has(svg[aria-label='pass rate per task'])")
                else page.inner_html(".plots")
            )
            assert "full_refund-1" not in plot and "cancel-1" not in plot  # 49 tasks: a profile, not 49 rotated labels
            (ROOT / "artifacts" / "report").mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ROOT / "artifacts" / "report" / f"layout-{width}.png"), full_page=True)
        finally:
            browser.close()


def test_conversations_show_reliability_and_the_simulated_users_turns(tmp_path: Path) -> None:
    missing = (
        importlib.util.find_spec("playwright") is None
        or not CHROMIUM.exists()
        or importlib.util.find_spec("matplotlib") is None
    )
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail("needs playwright, /usr/bin/chromium and matplotlib")
        pytest.skip("needs playwright, /usr/bin/chromium and matplotlib")
    run = tmp_path / "conv.jsonl"
    command = [sys.executable, "-m", "rolloutgym"]
    ran = subprocess.run(
        [
            *command,
            "run",
            "workflow/refund-conv-v0",
            "--policy",
            "oracle",
            "-n",
            "3",
            "--limit",
            "2",
            "-q",
            "-o",
            str(run),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert "reliability: pass^3 1.000" in ran.stdout
    subprocess.run(
        [*command, "report", str(run), "-o", str(tmp_path / "report.html")],
        check=True,
        timeout=300,
        capture_output=True,
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto((tmp_path / "report.html").as_uri())
            assert page.locator('[data-field="pass_hat_k"]').count() == 1
            page.locator(".task-table tbody tr").first.click()
            page.locator('.detail-pane [data-testid="members"] button').first.click()
            page.locator('[data-testid="trajectory"]').wait_for()
            turns = page.locator(".conversation .msg.simulated-user")
            assert turns.count() >= 2
            assert "simulated user" in turns.first.inner_text().lower()
        finally:
            browser.close()
