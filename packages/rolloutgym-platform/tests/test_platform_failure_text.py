"""A failed training job's reason is kept whole (the worker joins the child's wrapped ``error:`` lines instead of
keeping the last one), and the job page shows it wrapped inside the window (no sideways scrolling), in Chromium
when it is there. The page is served by the platform's own app (Starlette's test client, SQLite in tmp_path)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rolloutgym_platform import db
from rolloutgym_platform.app import create_app
from rolloutgym_platform.models import Job
from rolloutgym_platform.pages import COOKIE
from rolloutgym_platform.worker_jobs import MAX_REASON, failure_reason

WRAPPED = """loading hf:tiny
step 1/10 loss 2.31
error: the run file models/acme/job_x/rollouts.jsonl has no rollout with a reply to train on: run the env with a
policy that answers, or pick other rollouts with --rollout-ids
"""


def test_the_whole_reason_is_kept() -> None:
    reason = failure_reason(WRAPPED, 2)
    assert reason.startswith("error: the run file models/acme/job_x/rollouts.jsonl has no rollout")
    assert reason.endswith("pick other rollouts with --rollout-ids") and "\n" not in reason
    assert failure_reason("Traceback (most recent call last):\n  File 'x'\nValueError: bad\n", 1) == "ValueError: bad"
    assert failure_reason("╭─ Error ──╮\n│ No such option: --foo │\n╰──────────╯\n", 2) == "Error No such option: --foo"
    assert failure_reason("", 3) == "rolloutgym train exited with 3"
    assert len(failure_reason("error: " + "x" * 10 * MAX_REASON, 1)) == MAX_REASON


def _failed_job_page(data: Path, error: str) -> str:
    from starlette.testclient import TestClient

    app = create_app(data)
    sessions = app.state.platform.sessions
    key = db.create_key(sessions, name="t", scopes=["run", "train"], org="acme")
    with sessions.begin() as session:
        session.add(Job(id="job_0123456789ab", org="acme", source_run_id="run_0123456789ab", method="sft",
                        base_model="hf:" + "very-long-model-path/" * 12, state="failed", error=error))  # fmt: skip
    with TestClient(app, cookies={COOKIE: key}) as client:
        answer = client.get("/jobs/job_0123456789ab")
    sessions.kw["bind"].dispose()
    assert answer.status_code == 200
    return answer.text


def test_the_job_page_shows_the_whole_reason_wrapped(tmp_path: Path) -> None:
    reason = failure_reason(WRAPPED, 2) + " " + "/data/" + "a" * 600  # and one unbroken 600-character word
    text = _failed_job_page(tmp_path / "data", reason)
    assert f"<pre id='error'>{reason}</pre>" in text and "overflow-wrap:anywhere" in text
    chromium = Path("/usr/bin/chromium")
    playwright = pytest.importorskip("playwright.sync_api", reason="the layout check needs Playwright")
    if not chromium.exists():
        pytest.skip("/usr/bin/chromium is missing")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 800, "height": 600})
        page.set_content(text)
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        shown = page.locator("#error").inner_text()
        browser.close()
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths[0]} px wide in a {widths[1]} px window"
    assert shown == reason
