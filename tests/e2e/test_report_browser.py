"""The HTML report in a real browser: headless Debian Chromium driven by Playwright.

For every installed environment a small oracle run and a null run become one report; the
test opens it from disk, checks the summary against the run file, sorts the task table,
opens a task and a trajectory, visits the comparison, and saves screenshots under
``artifacts/report/``. Under ``CI=true`` a missing Chromium or Playwright fails the tests.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rolloutgym.registry import envs
from rolloutgym.runs import read_run, summarize

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "report"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ON_CI = os.environ.get("CI") == "true"

pytestmark = [pytest.mark.chromium, pytest.mark.slow]


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install playwright)"
    if not CHROMIUM.exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'rolloutgym[report]')"
    return None


def _require_browser() -> None:
    reason = _missing()
    if reason is None:
        return
    if ON_CI:
        pytest.fail(f"the report browser tests need a browser under CI: {reason}")
    pytest.skip(reason)


def _load_support() -> ModuleType:
    path = ROOT / "packages" / "rolloutgym" / "tests" / "test_report_support.py"
    spec = importlib.util.spec_from_file_location("rolloutgym_report_e2e_support", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Not ScienceWorld's 30 envs (a JVM per episode, gold paths slow to generate: CI time); their
# runs are ordinary text trajectories, tested in plugins/benchmarks/tests/test_scienceworld.py.
ENV_IDS = sorted(spec.id for spec in envs() if not spec.id.startswith("scienceworld/"))
# Envs whose oracle solves only some tasks: the report runs use tasks it solves.
ORACLE_TASKS = {"browser/miniwob-v0": ["click-button", "click-link"]}


class _Reports:
    """Each env's report, built the first time a test asks for it (on a pytest-xdist worker,
    only the envs its own tests check: building every env's runs on every worker cost
    minutes of CI). Runs are built in a thread of their own: they use their own event
    loops, which must not meet the browser's."""

    def __init__(self, folder: Path) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.folder = folder
        self.support = _load_support()
        self._built: dict[str, Any] = {"support": self.support}
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="report-runs")

    def __getitem__(self, key: str) -> Any:
        if key not in self._built:
            self._thread.submit(self._build, key.removeprefix("null:")).result()
        return self._built[key]

    def close(self) -> None:
        self._thread.shutdown()

    def _build(self, key: str) -> None:
        from rolloutgym.report import build_report

        support, folder = self.support, self.folder
        if key in ("errors", "tokens"):
            path = (support.error_run if key == "errors" else support.token_run)(folder / f"{key}.jsonl")
            self._built[key] = (build_report([path], folder / f"{key}.html"), path)
            return
        name = key.replace("/", "_")
        tasks = ORACLE_TASKS.get(key)
        oracle = support.toy_run(folder / f"{name}-oracle.jsonl", key, "oracle", n=2, limit=2, tasks=tasks)
        null = support.toy_run(folder / f"{name}-null.jsonl", key, "null", n=2, limit=2, tasks=tasks)
        self._built[key] = (build_report([oracle, null], folder / f"{name}.html"), oracle)
        self._built[f"null:{key}"] = null


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Reports]:
    """The reports, each built on first use."""
    _require_browser()
    built = _Reports(tmp_path_factory.mktemp("report-runs"))
    yield built
    built.close()


@pytest.fixture(scope="module")
def browser(reports: _Reports) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


class Page:
    """A browser page that records script errors and dialogs (a dialog means injected script ran)."""

    def __init__(self, browser: Any, *, offline: bool = True) -> None:
        # Offline: a report opened from disk must not need the network for anything.
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000}, offline=offline)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on(
            "console", lambda message: message.type == "error" and self.problems.append(f"console: {message.text}")
        )
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))

    def close(self) -> None:
        self.context.close()
        assert not self.problems, self.problems


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    holder = Page(browser)
    yield holder.page
    holder.close()


def _shot(page: Any, name: str, *, full_page: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


def _card(section: Any, field: str) -> tuple[str, str]:
    card = section.locator(f'.card[data-field="{field}"]')
    return card.get_attribute("data-value"), card.locator(".value").inner_text()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_report_of_each_env_matches_the_run_and_clicks_through(reports: _Reports, page: Any, env_id: str) -> None:
    result, oracle_path = reports[env_id]
    run = read_run(oracle_path)
    summary = summarize(run.groups, header=run.header, task_indices=run.task_indices)
    page.goto(result.path.as_uri())
    section = page.locator("section#run-0")
    assert section.is_visible() and section.locator('[data-field="env_id"]').inner_text() == env_id

    # Summary: the exact values, and the same formatting as 'rolloutgym show'.
    raw, shown = _card(section, "pass_rate")
    assert float(raw) == summary.pass_rate and shown == f"{summary.pass_rate:.1%}"
    raw, shown = _card(section, "mean_reward")
    assert float(raw) == summary.mean_reward and shown == f"{summary.mean_reward:.3f}"
    for field in ("num_tasks", "num_trajectories", "num_errors", "total_tokens"):
        assert int(_card(section, field)[0]) == getattr(summary, field), field
    for k, value in summary.pass_at.items():
        assert float(section.locator(f'tr[data-field="pass_at"] td[data-k="{k}"]').get_attribute("data-value")) == value
        assert (
            float(section.locator(f'tr[data-field="pass_hat"] td[data-k="{k}"]').get_attribute("data-value"))
            == summary.pass_hat[k]
        )
    assert section.locator("svg.plot").count() == 3
    _shot(page, f"{env_id.replace('/', '_')}-summary", full_page=True)

    # The task table: one row per task, sortable.
    rows = section.locator(".task-table tbody tr")
    assert rows.count() == summary.num_tasks
    section.locator('.task-table th[data-key="task"]').click()
    assert section.locator('.task-table th[data-key="task"]').get_attribute("aria-sort") == "ascending"
    names = [rows.nth(index).locator("td").first.inner_text() for index in range(rows.count())]
    assert names == sorted(names)
    section.locator('.task-table th[data-key="task"]').click()
    assert section.locator('.task-table th[data-key="task"]').get_attribute("aria-sort") == "descending"

    # Open a task and its first trajectory.
    task = next(task for task in summary.tasks if task.task_id == names[-1])
    rows.first.click()
    detail = section.locator(".detail-pane")
    assert detail.locator('[data-testid="task-title"]').inner_text().startswith(task.task_id)
    members = detail.locator('[data-testid="members"] button')
    assert members.count() == task.trajectories + task.errors
    members.first.click()
    trajectory = detail.locator('[data-testid="trajectory"]')
    trajectory.wait_for()
    group = run.groups[run.task_indices.index(task.task_index)]
    score = group.scores[0]
    assert trajectory.locator('[data-testid="score"] .value').inner_text() == f"{score.value:.3f}"
    assert trajectory.locator("table.components tbody tr").count() == _count_components(score)
    assert trajectory.locator(".conversation .msg").count() >= 1
    assert trajectory.locator(".conversation .step").count() == len(group.trajectories[0].steps)
    detail.scroll_into_view_if_needed()
    _shot(page, f"{env_id.replace('/', '_')}-trajectory")

    # The null run's tab: a failing trajectory with its feedback.
    page.locator('nav button[data-view="run-1"]').click()
    failing = page.locator("section#run-1")
    failing.locator(".task-table tbody tr").first.click()
    failing.locator('.detail-pane [data-testid="members"] button').first.click()
    failing.locator('.detail-pane [data-testid="trajectory"]').wait_for()
    # The null policy fails every task, except where not acting is right (bfcl irrelevance).
    null_run = read_run(reports[f"null:{env_id}"])
    first = null_run.groups[null_run.task_indices.index(min(null_run.task_indices))]  # the table's first row
    threshold = float(null_run.header.get("pass_threshold", 1.0))
    expected = "pass" if first.scores and first.scores[0].value >= threshold else "fail"
    assert failing.locator('.detail-pane [data-testid="score"] .badge').inner_text() == expected
    failing.locator(".detail-pane").scroll_into_view_if_needed()
    _shot(page, f"{env_id.replace('/', '_')}-failing")

    # Two runs: the comparison view with its delta chart and per-task table.
    page.locator('nav button[data-view="compare"]').click()
    compare = page.locator("section#compare")
    assert compare.is_visible() and compare.locator("svg.plot").count() == 1
    assert compare.locator("#compare-table-1 tbody tr").count() == summary.num_tasks
    _shot(page, f"{env_id.replace('/', '_')}-compare", full_page=True)


def _count_components(score: Any) -> int:
    return sum(1 + _count_components(child) for child in score.components.values())


def test_token_level_runs_show_sampled_tokens_shaded_by_logprob(reports: _Reports, page: Any) -> None:
    result, path = reports["tokens"]
    step = read_run(path).groups[0].trajectories[0].steps[0]
    page.goto(result.path.as_uri() + "#run-0/task/0/member/0")
    trajectory = page.locator('section#run-0 [data-testid="trajectory"]')
    trajectory.wait_for()
    tokens = trajectory.locator('.step[data-step="0"] [data-testid="tokens"] .tok')
    assert tokens.count() == len(step.policy_tokens)
    assert [int(tokens.nth(index).inner_text()) for index in range(5)] == list(step.policy_tokens[:5])
    shades = {tokens.nth(index).evaluate("node => getComputedStyle(node).backgroundColor") for index in range(11)}
    assert len(shades) > 3  # different logprobs, different shades
    assert f"logprob {step.policy_logprobs[1]:.3f}" in tokens.nth(1).get_attribute("title")
    assert int(page.locator('section#run-0 .card[data-field="total_tokens"]').get_attribute("data-value")) > 0
    trajectory.locator('.step[data-step="0"]').scroll_into_view_if_needed()
    _shot(page, "tokens-trajectory")


def test_failed_members_open_from_the_error_table(reports: _Reports, page: Any) -> None:
    result, _ = reports["errors"]
    page.goto(result.path.as_uri())
    section = page.locator("section#run-0")
    assert section.locator('table.errors-by-type tr[data-type="ConnectionError"] td[data-value]').inner_text() == "6"
    error_rows = section.locator(".error-list tbody tr")
    assert error_rows.count() == 6
    error_rows.nth(2).click()
    box = section.locator('.detail-pane [data-testid="error"]')
    box.wait_for()
    assert "model server went away" in box.inner_text() and "ConnectionError" in box.inner_text()
    box.locator("summary").click()
    assert "Traceback" in box.locator("pre").inner_text()
    section.locator("select.task-outcome").select_option("errors")
    assert section.locator(".task-table tbody tr").count() == 3
    section.locator("input.task-filter").fill("arith-01")
    assert section.locator(".task-table tbody tr").count() == 1
    _shot(page, "errors", full_page=True)


def test_view_serves_the_same_report_over_http(reports: _Reports, browser: Any) -> None:
    from rolloutgym.report import ReportServer

    result, _ = reports["toy/guess-v0"]
    server = ReportServer(result.path)
    server.start()
    holder = Page(browser, offline=False)  # loopback HTTP counts as network for an offline context
    page = holder.page
    try:
        page.goto(server.url + "#run-0/task/1/member/1")
        trajectory = page.locator('section#run-0 [data-testid="trajectory"]')
        trajectory.wait_for()
        assert trajectory.locator("h3").inner_text().startswith("member 1")
        assert page.locator('section#run-0 .members button[aria-pressed="true"]').get_attribute("data-member") == "1"
    finally:
        holder.close()
        server.stop()


def test_hostile_run_content_stays_text(reports: _Reports, page: Any, tmp_path: Path) -> None:
    import json

    from rolloutgym.report import build_report

    support = reports["support"]
    hostile = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"
    run_file = tmp_path / "hostile.jsonl"
    header = support.hand_header("toy/arith-v0", "hostile", [hostile], 1)
    step = {
        "observation": [],
        "action": {
            "role": "assistant",
            "content": hostile,
            "tool_calls": [{"id": hostile, "name": hostile, "arguments": {hostile: hostile}}],
        },
        "reward": 0.0,
        "next_observation": [{"role": "tool", "tool_call_id": hostile, "content": hostile}],
        "terminated": True,
        "truncated": False,
        "info": {},
    }
    group = {
        "kind": "group",
        "task_index": 0,
        "item_id": hostile,
        "item": hostile,
        "trajectories": [
            {
                "initial_observation": [{"role": "user", "content": hostile}],
                "steps": [step],
                "terminated": True,
                "truncated": False,
            }
        ],
        "scores": [{"value": 0.0, "feedback": hostile, "components": {hostile: {"value": 0.0, "feedback": hostile}}}],
    }
    run_file.write_text(json.dumps(header) + "\n" + json.dumps(group) + "\n")
    report = build_report([run_file], tmp_path / "hostile.html")
    page.goto(report.path.as_uri() + "#run-0/task/0/member/0")
    trajectory = page.locator('section#run-0 [data-testid="trajectory"]')
    trajectory.wait_for()
    assert hostile in trajectory.locator(".conversation").inner_text()
    assert page.locator("img").count() == 0
    page.wait_for_timeout(200)  # the Page fixture fails the test if any alert() ran


def test_report_page_names_its_source(reports: _Reports, page: Any) -> None:
    result, path = reports["toy/arith-v0"]
    page.goto(result.path.as_uri())
    assert re.search(r"toy/arith-v0 · oracle vs toy/arith-v0 · null", page.title())
    assert str(path) in page.locator("section#run-0 .run-meta").inner_text()
