"""The platform's client commands: ``login``, ``push``, ``envs --remote``, ``improve``, ``jobs``, ``job``; and the
``--remote`` branches of ``run`` and ``runs``. They only speak HTTP (:class:`rolloutgym.platform.Client`); the server's
own commands (``platform serve``, ``platform keys create``) come with the rolloutgym-platform distribution."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

import typer

from ._app import app, console, error_console, fail, is_interactive, print_table

RUN_ID = re.compile(r"^run_[0-9a-f]{12}$")


def _current_context() -> Any:
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # a typer that uses click itself
        from click import get_current_context
    return get_current_context(silent=True)


def client(endpoint: Optional[str] = None) -> Any:
    """A :class:`~rolloutgym.platform.Client`, or a one-line error when there are no credentials."""
    from ..platform import Client
    from ..platform.errors import PlatformError

    try:
        remote = Client(endpoint)
    except PlatformError as exc:
        fail(str(exc))
    context = _current_context()
    if context is not None:
        context.call_on_close(remote.close)
    return remote


def call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(...)``; a platform error becomes ``error: ...`` and exit 2."""
    from ..platform.errors import PlatformError

    try:
        return function(*args, **kwargs)
    except PlatformError as exc:
        fail(str(exc))


def _check_answers(url: str) -> None:
    """A one-line error unless ``url`` answers as a rolloutgym platform (``GET /api/health``, no key needed)."""
    import httpx

    try:
        answer = httpx.get(f"{url}/api/health", timeout=10, follow_redirects=False)
    except httpx.HTTPError as exc:
        fail(f"cannot reach a platform at {url} ({type(exc).__name__}); start one with 'rolloutgym platform serve' "
             "or give its URL: rolloutgym login URL")  # fmt: skip
    kind = answer.headers.get("content-type", "")
    if answer.status_code != 200 or "html" in kind or "json" not in kind:
        fail(f"{url} answered {answer.status_code} {kind}, not as a rolloutgym "
             "platform; give the platform's URL: rolloutgym login URL")  # fmt: skip


@app.command("login")
def login_command(
    endpoint: Optional[str] = typer.Argument(
        None, help="The platform's URL (default: the one saved last, else http://127.0.0.1:8600)."
    ),
    key: Optional[str] = typer.Option(None, "--key", help="The API key (default: prompted, hidden)."),
) -> None:
    """Check an API key against the platform and store it in ~/.config/rolloutgym/credentials (0600)."""
    from ..platform import Client, credentials

    url = credentials.normalize(endpoint) if endpoint else credentials.saved_endpoint()
    _check_answers(url)  # before asking for a key
    if key is None:
        console.print(f"Mint an API key with 'rolloutgym platform keys create' on the host of {url}")
        key = typer.prompt("Paste API key (rk_…)", hide_input=True)
    with Client(url, key) as remote:
        who = call(remote.whoami)
    path = credentials.save(url, key)
    console.print(f"✓ saved credentials for {url} (org {who['org']}, scopes {','.join(who['scopes'])}) in {path}")


@app.command("push")
def push_command(
    env: str = typer.Argument(..., help="An env file (.py/.json/.jsonl) or a registered env id."),
    include: Optional[list[Path]] = typer.Option(None, "--include", help="Another data file to upload (repeatable)."),
    slug: Optional[str] = typer.Option(None, "--slug", help="The slug to push under (default: the file's own)."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="The platform's URL (default: from login)."),
) -> None:
    """Upload a versioned env: its version is the content hash of the env file and its data files."""
    remote = client(endpoint)
    answer = call(remote.push, env, include=include, slug=slug)
    state = "new version" if answer["created"] else "unchanged, version"
    console.print(f"pushed {answer['slug']}: {state} {answer['version']} → {remote.endpoint}/envs/{answer['slug']}")


@app.command("envs")
def envs_command(
    remote: bool = typer.Option(False, "--remote", help="List the envs pushed to the platform."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint"),
) -> None:
    """List envs pushed to the platform (--remote); without it, the installed envs ('rolloutgym list')."""
    if not remote:
        from .listing import list_command

        list_command(namespace=None)
        return
    from rich.table import Table

    table = Table("slug", "version", "kind", "versions", "pushed")
    for env in call(client(endpoint).list_envs):
        table.add_row(env["slug"], env["version"], env["kind"], str(env["versions"]), env["createdAt"])
    print_table(table)


def _follow(lines: Any, run: dict[str, Any], show: bool) -> dict[str, Any]:
    """Follow the run to its end through ``lines`` (``Client.follow_run``: the platform streams each change in the
    request that queued it), with a progress bar; Ctrl-C detaches (the run goes on)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    progress = Progress(
        TextColumn(f"{run['envSlug']} {run['id']}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[state]} pass {task.fields[rate]}"),
        console=error_console,
        disable=not show,
    )
    try:
        with progress:
            task = progress.add_task("run", total=None, state="queued", rate="-")
            while run["state"] in ("queued", "running"):
                run = call(next, lines)
                rate = f"{run['passes'] / run['trajectories']:.0%}" if run["trajectories"] else "-"
                progress.update(task, total=run["total"], completed=run["done"], state=run["state"], rate=rate)
    except KeyboardInterrupt:
        lines.close()  # closes the stream: the platform stops sending, the run goes on
        error_console.print(f"detached; run {run['id']} goes on (rolloutgym runs --remote shows it)")
        raise typer.Exit(0) from None
    return run


@app.command("run-remote", hidden=True)
def run_remote_command(
    env: str = typer.Argument(..., help="The pushed env's slug."),
    policy: str = typer.Option("oracle", "--policy", "-p", help="NAME[:MODEL], or job:ID (a trained model)."),
    n: int = typer.Option(1, "-n", "--num-rollouts", help="Rollouts per task."),
    limit: Optional[int] = typer.Option(None, "--limit"),
    tasks: Optional[list[str]] = typer.Option(None, "--tasks", "--task"),
    split: Optional[str] = typer.Option(None, "--split"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps"),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-c", help="Episodes in flight at once."),
    policy_args: Optional[list[str]] = typer.Option(
        None, "--policy-arg", help="KEY=VALUE passed to the policy on the worker (repeatable)."
    ),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per episode on the worker."),
    pass_threshold: Optional[float] = typer.Option(
        None, "--pass-threshold", help="Score that counts as a pass (default 1.0)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
    endpoint: Optional[str] = typer.Option(None, "--endpoint"),
) -> None:
    """``rolloutgym run SLUG --remote``: queue a run on the platform and follow its progress."""
    from ._app import parse_key_values

    tasks = [part for item in tasks or [] for part in item.split(",") if part] or None
    options = {"limit": limit, "seed": seed, "split": split, "max_steps": max_steps, "tasks": tasks}
    options |= {"concurrency": concurrency, "timeout": timeout, "pass_threshold": pass_threshold}
    options["policy_options"] = parse_key_values(policy_args, "--policy-arg") or None
    run_remote(env, policy, n, options=options, quiet=quiet, endpoint=endpoint)


def run_remote(env: str, policy: str, n: int, *, options: dict[str, Any], quiet: bool, endpoint: Any = None) -> None:
    """Queue the run, follow it, print its outcome: one request, streaming the run's progress (only its end when
    there is no progress bar to show) until it has ended."""
    remote = client(endpoint)
    show = not quiet and is_interactive()
    lines = remote.follow_run(env, policy, n, progress=show, **options)
    run = call(next, lines)  # the queued run (or the one-line error of an unknown env, a missing scope)
    console.print(f"queued run {run['id']} of {run['envSlug']} (version {run['envVersion']})")
    run = _follow(lines, run, show)
    if run["state"] != "succeeded":
        fail(f"run {run['id']} {run['state']}: {run['error']}", code=1)
    rate = f"{run['passRate']:.1%}" if run["passRate"] is not None else "-"
    console.print(
        f"run {run['id']} succeeded: {run['trajectories']} trajectories, pass rate {rate}, {run['errors']} errors"
    )


def runs_remote(endpoint: Any = None, limit: int = 50) -> None:
    """``rolloutgym runs --remote``."""
    from rich.table import Table

    table = Table("run", "env", "policy", "n", "state", "done", "pass", "errors", "created")
    failures: list[str] = []
    for run in call(client(endpoint).list_runs, limit=limit):
        rate = f"{run['passRate']:.1%}" if run["passRate"] is not None else "-"
        if not run.get("trajectories") and run.get("errors"):
            rate = "none scored"  # every episode errored: no pass rate, not 0%
        done = f"{run['done']}/{run['total']}" if run["total"] is not None else "-"
        table.add_row(
            run["id"],
            run["envSlug"],
            run["policy"],
            str(run["n"]),
            run["state"],
            done,
            rate,
            str(run["errors"]),
            run["createdAt"],
        )
        if run["state"] == "failed" and run.get("error"):
            failures.append(f"{run['id']} failed: {run['error']}")
    print_table(table)
    for line in failures:  # why each failed run failed, in full (not only in the terminal that queued it)
        console.print(line, markup=False, soft_wrap=True)


def local_run_file(reference: Path) -> Path:
    """A run file for ``reference``: the file itself, or a remote run id downloaded to ~/.cache on demand."""
    if reference.exists() or not RUN_ID.match(str(reference)):
        return reference
    import os

    remote = client()
    host = re.sub(r"[^A-Za-z0-9]+", "_", remote.endpoint)
    cached = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rolloutgym" / "runs" / host
    target = cached / f"{reference}.jsonl"
    run = call(remote.get_run, str(reference))
    if not target.exists() or run["state"] in ("queued", "running"):
        call(remote.download_run, str(reference), target)
    return target


@app.command("improve")
def improve_command(
    run: str = typer.Option(..., "--run", help="The remote run to train on (its id)."),
    model: str = typer.Option(..., "--model", help="The base model, e.g. hf:tiny or hf:PATH."),
    method: str = typer.Option("sft", "--method", help="sft (passing rollouts), dpo (preference pairs), grpo."),
    suffix: Optional[str] = typer.Option(None, "--suffix", help="A label for the trained model."),
    steps: Optional[int] = typer.Option(None, "--steps", help="Training steps (default 10)."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the job to end."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint"),
) -> None:
    """Queue a training job on a run (through the TRL plugin on a worker)."""
    remote = client(endpoint)
    options = {"steps": steps} if steps is not None else {}
    ids = call(remote.passing_rollout_ids, run) if method == "sft" else None
    job = call(
        remote.create_training_job,
        source_run_id=run,
        rollout_ids=ids,
        base_model=model,
        method=method,
        suffix=suffix,
        **options,
    )
    console.print(
        f"queued job {job['id']} ({method} of {model} on run {run}); follow it with rolloutgym job {job['id']}"
    )
    if wait:
        job = call(remote.wait_job, job["id"])
        _print_job(job)
        if job["state"] != "succeeded":
            raise typer.Exit(1)


@app.command("jobs")
def jobs_command(endpoint: Optional[str] = typer.Option(None, "--endpoint")) -> None:
    """List the platform's training jobs."""
    from rich.table import Table

    table = Table("job", "method", "base model", "run", "state", "model", "created")
    for job in call(client(endpoint).list_jobs):
        table.add_row(
            job["id"],
            job["method"],
            job["baseModel"],
            job["sourceRunId"],
            job["state"],
            job["model"] or "-",
            job["createdAt"],
        )
    print_table(table)


def _print_job(job: dict[str, Any]) -> None:
    console.print(f"job {job['id']}: {job['state']} ({job['method']} of {job['baseModel']} on {job['sourceRunId']})")
    if job.get("error"):
        console.print(f"error: {job['error']}")
    if job.get("model"):
        console.print(f"model: {job['model']} (use it with rolloutgym run SLUG --remote --policy {job['model']})")
    curve = job.get("curve") or []
    if curve:
        losses = ", ".join(f"{point['loss']:.3g}" for point in curve[-10:])
        console.print(f"loss by step (last {min(len(curve), 10)} of {len(curve)}): {losses}")
    for line in job.get("logTail") or []:
        console.print(f"  {line}")


@app.command("job")
def job_command(
    job_id: str = typer.Argument(..., help="The job's id."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint"),
) -> None:
    """A training job: its state, the training curve and the tail of its log."""
    _print_job(call(client(endpoint).get_job, job_id))
