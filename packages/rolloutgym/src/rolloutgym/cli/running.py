"""``rolloutgym run`` (also ``rollout-run``) and ``rolloutgym play``."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import typer

from ._app import EXIT_RUN_ERRORS, app, console, error_console, fail, is_interactive, output_path, parse_key_values


def default_out_path(env: str) -> Path:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(env).stem if env.endswith((".py", ".json", ".jsonl")) else env).strip(
        "-"
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{stem}-{stamp}.jsonl"


# Options declared once here keep run_command's signature short.
_TIMEOUT = typer.Option(None, "--timeout", help="Wall-clock budget per rollout, seconds (truncates).")

_USER_POLICY = typer.Option(
    None,
    "--user-policy",
    help="NAME[:MODEL] that plays the simulated user of conversational envs (= --env-arg user_policy=...).",
)

_SANDBOX = typer.Option(
    None, "--sandbox", help="Sandbox provider of code and Harbor envs, e.g. docker (= --env-arg sandbox=NAME)."
)

_IMAGE_MAP = typer.Option(
    None,
    "--image-map",
    help="IMAGE=LOCAL_IMAGE for offline builds, e.g. python:3.11-slim=localhost/rolloutgym/bookworm-python.",
)

_RAY_ADDRESS = typer.Option(None, "--ray-address", help="Ray cluster address for --executor ray (e.g. auto).")

_PASS_THRESHOLD = typer.Option(1.0, "--pass-threshold", help="A trajectory passes when its score reaches this.")

_MIX = typer.Option(
    None,
    "--mix",
    help="Several envs in one run file: ENV=WEIGHT,ENV=WEIGHT,... or a mixture file (JSON, or ENV=WEIGHT lines).",
)

_BRANCH_AT = typer.Option(
    None,
    "--branch-at",
    help="Rollout trees (forkable envs): per task one episode, then -n continuations from each chosen step: "
    "'every', 'before-error' (retry the step the env reported as an error) or step indices (e.g. 2,5).",
)


@app.command("run")
def run_command(
    env: Optional[str] = typer.Argument(
        None, help="Environment id (toy/guess-v0) or env file (.py/.json/.jsonl); omit it with --mix."
    ),
    policy: str = typer.Option(
        "oracle", "--policy", "-p", help="NAME[:MODEL], e.g. oracle, null, openai:gpt-4o-mini, hf:tiny."
    ),
    num_rollouts: int = typer.Option(
        1, "-n", "--num-rollouts", help="Rollouts per task (the group size); with --branch-at, branches per step."
    ),
    limit: Optional[int] = typer.Option(None, "--limit", help="Run only the first N selected tasks."),
    tasks: Optional[list[str]] = typer.Option(
        None, "--tasks", "--task", help="Task ids or indices (repeat or comma-separate)."
    ),
    split: Optional[str] = typer.Option(None, "--split", help="Only tasks of this split (train/dev/test)."),
    seed: Optional[int] = typer.Option(
        None, "--seed", help="Base seed: member i of the k-th task resets with seed + k*n + i."
    ),
    concurrency: int = typer.Option(8, "--concurrency", "-c", help="Episodes in flight at once."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Step budget per rollout (truncates)."),
    timeout: Optional[float] = _TIMEOUT,
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Run file to write (default runs/ENV-TIME.jsonl)."),
    resume: bool = typer.Option(
        False, "--resume", help="Continue --out: skip tasks already in it, re-run groups that hold only errors."
    ),
    env_args: Optional[list[str]] = typer.Option(
        None, "--env-arg", help="KEY=VALUE passed to the env factory (repeatable)."
    ),
    policy_args: Optional[list[str]] = typer.Option(
        None, "--policy-arg", help="KEY=VALUE passed to the policy (repeatable)."
    ),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="Shortcut for --env-arg backend=NAME (sql, browser envs)."
    ),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", help="Shortcut for --policy-arg base_url=URL (openai/vllm servers)."
    ),
    user_policy: Optional[str] = _USER_POLICY,
    sandbox: Optional[str] = _SANDBOX,
    image_map: Optional[list[str]] = _IMAGE_MAP,
    executor: str = typer.Option("local", "--executor", help="Where rollouts run: local or ray."),
    ray_address: Optional[str] = _RAY_ADDRESS,
    pass_threshold: float = _PASS_THRESHOLD,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    mix: Optional[str] = _MIX,
    branch_at: Optional[str] = _BRANCH_AT,
) -> None:
    """Run rollouts of ENV (or an env mixture, --mix) with a policy into a run file (--remote: on the platform)."""
    from ..runner import RunConfig

    _check_run_options(env, mix, resume=resume, out=out, limit=limit)
    factory_options = _factory_options(env_args, policy_args, backend, base_url, user_policy, ray_address)
    if sandbox is not None:
        factory_options["env_kwargs"]["sandbox"] = sandbox
    if image_map:
        factory_options["env_kwargs"]["image_map"] = ",".join(image_map)
    config = RunConfig(
        env=env or "",
        mix=mix,
        policy=policy,
        num_rollouts=num_rollouts,
        limit=limit,
        tasks=[part for item in tasks or [] for part in item.split(",") if part] or None,
        split=split,
        seed=seed,
        concurrency=concurrency,
        max_steps=max_steps,
        timeout=timeout,
        out=output_path(out or default_out_path(env or "mix"), "--out"),
        resume=resume,
        executor=executor,
        pass_threshold=pass_threshold,
        branch_at=branch_at,
        **factory_options,
    )
    _run_and_report(config, show=not quiet and is_interactive())


def _check_run_options(
    env: Optional[str], mix: Optional[str], *, resume: bool, out: Optional[Path], limit: Optional[int]
) -> None:
    """Exit with a usage error for option combinations ``rolloutgym run`` cannot run."""
    if (env is None) == (mix is None):
        fail("give one ENV, or several envs with --mix ENV=WEIGHT,... (not both)")
    if resume and out is None:
        fail("--resume needs --out RUN_FILE (the run file to continue)")
    if limit is not None and limit < 1:
        fail(f"--limit must be at least 1 (leave it out to run every selected task), got {limit}")


def _factory_options(
    env_args: Optional[list[str]],
    policy_args: Optional[list[str]],
    backend: Optional[str],
    base_url: Optional[str],
    user_policy: Optional[str],
    ray_address: Optional[str],
) -> dict[str, dict[str, Any]]:
    """RunConfig's ``env_kwargs``, ``policy_options`` and ``executor_options``: the KEY=VALUE options and their
    shortcuts (--backend, --base-url, --user-policy, --ray-address)."""
    env_kwargs = parse_key_values(env_args, "--env-arg")
    if backend is not None:
        env_kwargs["backend"] = backend
    policy_options = parse_key_values(policy_args, "--policy-arg")
    if base_url is not None:
        policy_options["base_url"] = base_url
    executor_options: dict[str, Any] = {}
    if ray_address is not None:
        executor_options["address"] = ray_address
    if user_policy is not None:
        env_kwargs["user_policy"] = user_policy
    return {"env_kwargs": env_kwargs, "policy_options": policy_options, "executor_options": executor_options}


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt where the main thread is, at once (asyncio.run's own handler
    only cancels the main task, which waits for the event loop: a model decoding on the loop's
    thread, or a task that swallows the cancel, kept the run going). The run file already holds
    every finished group; asyncio.run then cancels the episodes still running."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is not signal.default_int_handler:
        yield  # not ours to change (a thread, an ignored SIGINT as under nohup, a caller's handler)
        return

    def interrupt(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second press interrupts the clean-up too
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _quiet_interrupt(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler: a task ended by Ctrl-C is no error to print (the CLI says "interrupted")."""
    if not isinstance(context.get("exception"), KeyboardInterrupt):
        loop.default_exception_handler(context)


def _run_and_report(config: Any, *, show: bool) -> None:
    """Run ``config``, print the summary, and exit non-zero when episodes ended in errors."""
    try:
        with _interruptible():
            result = asyncio.run(_run_with_progress(config, show=show))
    except KeyboardInterrupt:
        # Every finished group is already in the run file (written as it arrives).
        error_console.print(
            f"interrupted; the finished tasks are in {config.out}. Resume with the same command plus "
            f"--out {config.out} --resume",
            markup=False,
        )
        raise typer.Exit(130) from None
    from .runs import print_summary

    print_summary(result.summary, result.header)
    if result.retried:
        retried = ", ".join(map(str, result.retried[:20]))
        console.print(f"re-ran {len(result.retried)} group(s) that held only errors (tasks {retried})")
    console.print(f"run file: {result.path}")
    if result.summary.num_errors:
        raise typer.Exit(EXIT_RUN_ERRORS)


async def _run_with_progress(config: Any, *, show: bool) -> Any:
    """Run ``config`` under a progress bar that counts episodes (tasks x -n), as each one ends."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..runner import arun
    from ._tokens_column import TokensColumn

    state = {"passes": 0, "trajectories": 0, "errors": 0, "members": 0}
    threshold = config.pass_threshold
    progress = Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("episodes  pass {task.fields[rate]}  errors {task.fields[errors]}"),
        TokensColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=error_console,
        disable=not show,
        transient=False,
    )
    handle: dict[str, Any] = {}

    def on_start(header: dict[str, Any], remaining: int) -> None:
        episodes = remaining * int(header.get("num_rollouts") or 1)
        handle["task"] = progress.add_task(header["env"]["id"], total=episodes, rate="-", errors=0)

    def on_member(task_index: int, member: int) -> None:
        state["members"] += 1
        progress.update(handle["task"], advance=1)

    def on_group(task_index: int, group: Any) -> None:
        state["passes"] += sum(score.value >= threshold for score in group.scores)
        state["trajectories"] += len(group.scores)
        state["errors"] += len(group.errors)
        rate = f"{state['passes'] / state['trajectories']:.0%}" if state["trajectories"] else "-"
        ended = len(group.scores) + len(group.errors)
        # An executor that does not report episodes (ray) moves the bar a group at a time.
        counted, state["members"] = min(state["members"], ended), max(0, state["members"] - ended)
        progress.update(handle["task"], advance=ended - counted, rate=rate, errors=state["errors"])

    asyncio.get_running_loop().set_exception_handler(_quiet_interrupt)
    with progress:
        return await arun(config, on_start=on_start, on_group=on_group, on_member=on_member)


@app.command("play")
def play_command(
    env: str = typer.Argument(
        ...,
        help="Environment id (e.g. toy/guess-v0), env file path (my_env.py) or served env URL: whatever 'run' accepts.",
    ),
    task: Optional[str] = typer.Option(None, "--task", help="Task id or index (default: the first)."),
    seed: Optional[int] = typer.Option(None, "--seed"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps"),
) -> None:
    """Play one episode yourself at the terminal (the 'human' policy)."""
    from ..builtin.policies import HumanPolicy
    from ..registry import get_registry
    from ..rollouts import arollout
    from ..sources import EnvSource, resolve_env

    resolved = resolve_env(EnvSource(env), get_registry())  # an id, an env file or a URL, as `run` reads it
    chosen: Any = None if task is None else (int(task) if task.lstrip("-").isdigit() else task)
    policy = HumanPolicy()

    async def episode() -> Any:
        environment = resolved.open(chosen)
        try:
            return await arollout(environment, policy, seed=seed, max_steps=max_steps or resolved.max_steps)
        finally:
            closing = environment.close()
            if asyncio.iscoroutine(closing):
                await closing

    try:
        trajectory = asyncio.run(episode())
    except (EOFError, KeyboardInterrupt):
        console.print("\nstopped.")
        raise typer.Exit(1) from None
    score = trajectory.score
    console.print(f"episode over after {len(trajectory)} steps ({trajectory.stop_reason}); reward {score.value:g}")
    if score.feedback:
        console.print(f"feedback: {score.feedback}")
    for name, component in score.components.items():
        console.print(f"  {name}: {component.value:g}" + (f" — {component.feedback}" if component.feedback else ""))
