"""The platform's read-only web pages: envs and their versions, runs (the HTML report of each), jobs (curves).

A page needs an API key, as the API does: ``?key=rk_...`` once (the answer sets the
``rolloutgym_key`` cookie, HttpOnly, SameSite=Strict, and redirects to the same page without
the key in its address) or that cookie afterwards. A key sees only its organisation's pages;
another organisation's env, run or job answers 404, as an unknown one does. The pages of
runs and jobs are the report that ``rolloutgym report`` writes (built from the run file or the
training log, cached in ``DATA/pages`` until the file changes).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from rolloutgym.platform.envfiles import SLUG
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from . import db
from .models import ApiKey, EnvVersion, Job, RunRow
from .trust import ROW_ID

COOKIE = "rolloutgym_key"
# Long content (a training failure's whole reason, a model path, a policy reference) wraps inside the window:
# no page scrolls sideways.
STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:100%;overflow-wrap:anywhere}"
    "table{border-collapse:collapse;max-width:100%}"
    "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;overflow-wrap:anywhere}nav a{margin-right:1rem}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:.6rem;max-width:100%}"
)


class PageError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    nav = '<nav><a href="/envs">envs</a><a href="/runs">runs</a><a href="/jobs">jobs</a></nav>'
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body>{nav}<h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(text, status_code=status)


def _table(headers: list[str], rows: list[list[str]], table_id: str) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in headers)
    lines = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table id='{table_id}'><thead><tr>{head}</tr></thead><tbody>{lines}</tbody></table>"


def _link(href: str, text: str) -> str:
    return f"<a href='{html.escape(href, quote=True)}'>{html.escape(text)}</a>"


def _text(value: Any) -> str:
    return html.escape("-" if value is None else str(value))


def _key(request: Request) -> ApiKey:
    token = request.query_params.get("key") or request.cookies.get(COOKIE) or ""
    if not token:
        raise PageError(401, "These pages need an API key: open this address with ?key=rk_... once (it is kept).")
    with request.app.state.platform.sessions() as session:
        key = db.find_key(session, token)
    if key is None:
        raise PageError(401, "The API key is not valid here: mint one with 'rolloutgym platform keys create'.")
    return key


def _owned(request: Request, model: Any, row_id: str, what: str) -> Any:
    key = _key(request)
    if not ROW_ID.match(row_id) or not row_id.startswith(what + "_"):  # never sent to the database as it is
        raise PageError(404, f"No {what} {row_id[:60]}.")
    with request.app.state.platform.sessions() as session:
        row = session.get(model, row_id)
    if row is None or row.org != key.org:
        raise PageError(404, f"No {what} {row_id}.")
    return row


def envs_page(request: Request) -> Response:
    key = _key(request)
    with request.app.state.platform.sessions() as session:
        rows = session.scalars(select(EnvVersion).where(EnvVersion.org == key.org).order_by(EnvVersion.id)).all()
    latest: dict[str, tuple[EnvVersion, int]] = {}
    for row in rows:
        latest[row.slug] = (row, latest.get(row.slug, (row, 0))[1] + 1)
    table = [
        [_link(f"/envs/{slug}", slug), _text(row.version), _text(row.kind), str(count), _text(row.created_at)]
        for slug, (row, count) in sorted(latest.items())
    ]
    return _page("Envs", _table(["env", "latest version", "kind", "versions", "pushed"], table, "envs"))


def env_page(request: Request) -> Response:
    key = _key(request)
    slug = request.path_params["slug"]
    if not SLUG.match(slug):
        raise PageError(404, f"No env {slug[:60]}.")
    with request.app.state.platform.sessions() as session:
        versions = session.scalars(
            select(EnvVersion).where(EnvVersion.org == key.org, EnvVersion.slug == slug).order_by(EnvVersion.id)
        ).all()
        runs = session.scalars(
            select(RunRow)
            .where(RunRow.org == key.org, RunRow.env_slug == slug)
            .order_by(RunRow.created_at.desc())
            .limit(100)
        ).all()
    if not versions:
        raise PageError(404, f"No env {slug}.")
    table = [
        [_text(row.version), _text(row.kind), _text(", ".join(row.files or [])), _text(row.created_at)]
        for row in versions
    ]
    body = _table(["version", "kind", "files", "pushed"], table, "versions") + "<h2>Runs</h2>" + _runs_table(runs)
    return _page(f"Env {slug}", body)


def _runs_table(runs: list[RunRow]) -> str:
    rows = [
        [
            _link(f"/runs/{run.id}", run.id),
            _link(f"/envs/{run.env_slug}", run.env_slug),
            _text((run.options or {}).get("env_version")),
            _text(run.policy),
            _text(run.state),
            f"{run.done}/{_text(run.total)}",
            _text(f"{run.pass_rate:.1%}" if run.pass_rate is not None else None),
        ]
        for run in runs
    ]
    return _table(["run", "env", "version", "policy", "state", "done", "pass rate"], rows, "runs")


def runs_page(request: Request) -> Response:
    key = _key(request)
    with request.app.state.platform.sessions() as session:
        runs = session.scalars(
            select(RunRow).where(RunRow.org == key.org).order_by(RunRow.created_at.desc()).limit(500)
        ).all()
    return _page("Runs", _runs_table(list(runs)))


def _report(request: Request, source: Path, name: str, title: str) -> FileResponse:
    """The report of ``source`` (a run file or a training log), rebuilt when the file is newer than it."""
    from rolloutgym.report import build_report

    target = request.app.state.platform.data / "pages" / f"{name}.html"
    if not target.exists() or target.stat().st_mtime < source.stat().st_mtime:
        target.parent.mkdir(parents=True, exist_ok=True)
        build_report([source], target, title=title)
    return FileResponse(target, media_type="text/html")


def run_page(request: Request) -> Response:
    run = _owned(request, RunRow, request.path_params["run_id"], "run")
    data = request.app.state.platform.data
    if not run.path or not (data / run.path).is_file():
        return _page(f"Run {run.id}", f"<p id='state'>{_text(run.state)}: no results yet.</p>")
    return _report(request, data / run.path, f"{run.org}/{run.id}", f"Run {run.id} · {run.env_slug} · {run.policy}")


def jobs_page(request: Request) -> Response:
    key = _key(request)
    with request.app.state.platform.sessions() as session:
        jobs = session.scalars(select(Job).where(Job.org == key.org).order_by(Job.created_at.desc()).limit(500)).all()
    rows = [
        [
            _link(f"/jobs/{job.id}", job.id),
            _text(job.method),
            _text(job.base_model),
            _link(f"/runs/{job.source_run_id}", job.source_run_id),
            _text(job.state),
            _text(f"job:{job.id}" if job.state == "succeeded" else None),
        ]
        for job in jobs
    ]
    return _page("Jobs", _table(["job", "method", "base model", "run", "state", "model"], rows, "jobs"))


def job_page(request: Request) -> Response:
    job = _owned(request, Job, request.path_params["job_id"], "job")
    data = request.app.state.platform.data
    log = data / job.log_path if job.log_path else None
    if log is None or not log.is_file() or job.state in ("queued", "running"):
        error = f"<pre id='error'>{_text(job.error)}</pre>" if job.error else ""  # the whole reason, its lines kept
        return _page(f"Job {job.id}", f"<p id='state'>{_text(job.state)}: no training curves yet.</p>{error}")
    return _report(request, log, f"{job.org}/{job.id}", f"Job {job.id} · {job.method} of {job.base_model}")


def index_page(request: Request) -> Response:
    return RedirectResponse("/runs")


def _keep_key(handler: Any) -> Any:
    """Answer ``?key=`` by setting the cookie and redirecting to the address without it."""

    def page(request: Request) -> Response:
        try:
            token = request.query_params.get("key")
            if token:
                _key(request)  # a wrong key is refused here, not stored
                rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "key"])
                answer = RedirectResponse(request.url.path + (f"?{rest}" if rest else ""), status_code=303)
                answer.set_cookie(COOKIE, token, httponly=True, samesite="strict")
                return answer
            return handler(request)
        except PageError as exc:
            return _page("rolloutgym platform", f"<p id='error'>{html.escape(exc.message)}</p>", exc.status)

    page.__name__ = handler.__name__
    return page


ROUTES = [
    Route("/", _keep_key(index_page)),
    Route("/envs", _keep_key(envs_page)),
    Route("/envs/{slug:path}", _keep_key(env_page)),
    Route("/runs", _keep_key(runs_page)),
    Route("/runs/{run_id}", _keep_key(run_page)),
    Route("/jobs", _keep_key(jobs_page)),
    Route("/jobs/{job_id}", _keep_key(job_page)),
]
