"""``rolloutgym show`` and ``compare``: a run's summary, two runs side by side (rescore, export, runs: runs_data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text
from rolloutgym_protocol.display import json_text

from ._app import app, console, error_console, fail, markup_safe, print_table, shown_ks


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"  # NaN-safe


def _unanswered(summary: Any) -> str:
    count = getattr(summary, "num_prompt_too_long", 0)
    return f" (+{count} unanswered: prompt too long)" if count else ""


def attribution_text(summary: Any) -> str | None:
    """ "failures by party: agent 3 · user 2 · env 0 · grader 1 (...)", or ``None`` when no score carries one."""
    table = getattr(summary, "failures_by_party", None)
    if not table:
        return None
    parts = " · ".join(f"{party} {count}" for party, count in table.items())
    return (
        f"failures by party: {parts} ({summary.attributed} of {summary.num_trajectories} scores attributed); "
        f"pass rate with the non-agent failures left out {summary.agent_pass_rate:.1%}"
    )


def print_summary(summary: Any, header: dict[str, Any], *, per_task: bool | int = False) -> None:
    """The summary lines, then (``per_task``: True for every task, N for at most N) the per-task table."""
    from ..mixtures import env_breakdown, is_mixture, position_envs

    env = header.get("env", {})
    version = f"{len(header['mixture'])} envs" if is_mixture(header) else f"v{env.get('version')}"
    console.print(
        f"[bold]{markup_safe(env.get('id'))}[/] ({markup_safe(version)}) · policy "
        f"[bold]{markup_safe(header.get('policy'))}[/] · "
        f"{summary.num_tasks} tasks · {summary.num_trajectories} trajectories{_unanswered(summary)} · "
        f"n={header.get('num_rollouts')}",
        markup=True,
    )
    if not summary.num_trajectories:  # every member errored: no pass rate (a 0.0% would read as a model scoring 0)
        console.print(
            f"no scored episode: all {summary.num_errors} episode(s) ended in errors, so there is no pass rate; "
            "the errors are below"
        )
    else:
        console.print(
            f"pass rate {summary.pass_rate:.1%} · mean reward {_fmt(summary.mean_reward)} · "
            f"mean turns {summary.mean_turns:.1f} · errors {summary.num_errors}"
        )
    if summary.pass_hat and max(summary.pass_hat) > 1:
        # Reliability (tau-bench's pass^k): what conversational agents are judged on.
        k = max(summary.pass_hat)
        console.print(
            f"reliability: pass^{k} {_fmt(summary.pass_hat[k])} (the chance that all {k} tries of a task pass)"
        )
    if summary.pass_at:
        ks = shown_ks(summary.pass_at)
        console.print("pass@k: " + "  ".join(f"@{k} {_fmt(summary.pass_at[k])}" for k in ks))
        console.print("pass^k: " + "  ".join(f"^{k} {_fmt(summary.pass_hat[k])}" for k in ks if k in summary.pass_hat))
    if (attributed := attribution_text(summary)) is not None:
        console.print(attributed, markup=False)
    if summary.total_tokens:
        console.print(f"tokens: {summary.total_tokens} total, {summary.generated_tokens} generated")
    console.print(f"time: {summary.total_seconds:.2f} s summed over rollouts")
    if getattr(summary, "num_prompt_too_long", 0):
        console.print(
            f"[yellow]prompt too long: {summary.num_prompt_too_long} trajectories ended before the model spoke "
            "(the first prompt did not fit in max_seq_len); they are left out of the pass rate and rewards. "
            "Raise max_seq_len or shorten the prompts.[/]",
            markup=True,
        )
    if summary.errors_by_type:
        console.print(
            "errors by type: "
            + ", ".join(f"{name} × {count}" for name, count in sorted(summary.errors_by_type.items()))
        )
        for name, example in sorted(summary.error_examples.items()):
            console.print(f"  e.g. {name}: {example}", markup=False)
        console.print("  ('rolloutgym show RUN --errors' lists every failed member)")
    if per_task is not False:
        _per_task_table(summary, position_envs(header), None if per_task is True else per_task)
    if is_mixture(header):
        table = Table(title="Per env", title_justify="left")
        for column in ("env", "weight", "tasks", "n", "pass rate", "mean reward", "turns", "errors"):
            table.add_column(column, justify="right" if column != "env" else "left")
        for row in env_breakdown(header, summary.tasks):
            table.add_row(
                row["env"],
                f"{row['weight']:g}",
                str(row["tasks"]),
                str(row["trajectories"]),
                f"{row['pass_rate']:.0%}",
                _fmt(row["mean_reward"]),
                f"{row['mean_turns']:.1f}",
                str(row["errors"]),
            )
        print_table(table)


# Rows of show's per-task table by default: a run of thousands of tasks is read as its worst few.
SHOWN_TASKS = 40


def _per_task_table(summary: Any, envs: dict[int, str], limit: int | None) -> None:
    """Every task in run order; or, past ``limit`` tasks, the ``limit`` with the lowest pass rate and a line
    saying how many are hidden and how to see them."""
    tasks = summary.tasks
    title = "Per task"
    if limit is not None and len(tasks) > limit:
        tasks = sorted(tasks, key=lambda task: (task.pass_rate, task.mean_reward))[:limit]
        title = f"Per task: the {limit} of {len(summary.tasks):,} with the lowest pass rate"
    table = Table(title=title, title_justify="left")
    for column in ("task", "n", "pass rate", "mean reward", "turns", "errors"):
        table.add_column(column, justify="right" if column != "task" else "left")
    rows = []
    for task in tasks:
        label = f"{envs[task.task_index]}:{task.task_id}" if task.task_index in envs else task.task_id
        numbers = (str(task.trajectories), f"{task.pass_rate:.0%}", _fmt(task.mean_reward), f"{task.mean_turns:.1f}")
        rows.append([label, *numbers, str(task.errors)])
    for row in rows if limit is None else collapse_identical(rows):  # --rows 0: every task, one row each
        table.add_row(*row)
    print_table(table)
    hidden = len(summary.tasks) - len(tasks)
    if hidden:
        console.print(f"{hidden:,} more tasks not shown: '--rows 0' shows every task ('--json' has them all too)")


def torn_tail(path: Path) -> bool:
    """Whether the run file's last line was cut off mid-write (a killed run); ``--resume`` repairs it."""
    import json

    try:
        with Path(path).open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            if size == 0:
                return False
            handle.seek(max(0, size - 1))
            if handle.read(1) == b"\n":
                return False
            handle.seek(0)
            last = handle.read().rsplit(b"\n", 1)[-1]
    except OSError:
        return False
    if not last.strip():
        return False
    try:
        json.loads(last)
    except ValueError:
        return True
    return False


def warn_torn_tail(path: Path) -> None:
    """The one warning ``show``, ``compare`` and ``report`` print for a run file with a torn last line."""
    error_console.print(
        f"warning: {path}: its last line was cut off mid-write (the run was killed), so that task is left out; "
        "run the same 'rolloutgym run' command again with --resume to finish the run (this repairs the file)."
    )


def _local(path: Path) -> tuple[Path, bool]:
    """The run file on disk (a remote run id, run_..., is downloaded on demand) and whether its tail is torn."""
    from .platform import local_run_file

    path = local_run_file(path)
    return path, torn_tail(path)


def _summarized(path: Path) -> Any:
    """The run file streamed into its summary (:func:`rolloutgym.runs.summarize_run`): no group is kept."""
    from ..runs import summarize_run

    path, torn = _local(path)
    run = summarize_run(path, allow_partial_tail=torn)
    if torn:
        warn_torn_tail(path)
    return run


@app.command("show")
def show_command(
    run_file: Path = typer.Argument(..., help="A run file written by 'rolloutgym run'."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    errors: bool = typer.Option(False, "--errors", help="List every failed member with its message."),
    rows: int = typer.Option(
        SHOWN_TASKS,
        "--rows",
        min=0,
        help="Rows of the per-task table: past this many tasks it shows those with the lowest pass rate (0: all).",
    ),
    tree: bool = typer.Option(False, "--tree", help="Show each task's rollout tree (runs made with --branch-at)."),
) -> None:
    """Summarise a run: pass rate, mean reward, pass@k / pass^k, errors, turns, tokens, time (--tree: the trees)."""
    from rolloutgym_protocol import RolloutError

    run = _summarized(run_file)
    summary = run.summary
    if as_json:
        console.print_json(json.dumps(summary.to_dict()))
        return
    if not run.complete:  # said first: every number below covers only the finished tasks
        missing = run.num_missing
        console.print(
            f"[yellow]incomplete run: {missing} task(s) not finished, the numbers below cover the finished ones; "
            f"continue with 'rolloutgym run ... --out {markup_safe(run_file)} --resume'[/]",
            markup=True,
        )
    print_summary(summary, run.header, per_task=rows or True)
    if tree:
        _show_trees(run_file, run.header)
    if errors:
        for item_id, data in run.errors:
            error = RolloutError.from_dict(data)
            line = f"{item_id} member {error.member} [{error.where}] {error.error_type}: {error.error_message}"
            if error.action is not None:  # the action env.step raised on (any value, as text)
                line += f"\n  at step {error.step}, on the action {json_text(error.action)[:300]}"
            # an action may hold lone surrogates (a chaos policy's text): print them escaped
            console.print(line.encode("utf-8", "backslashreplace").decode("utf-8"), markup=False, highlight=False)


def _show_trees(run_file: Path, header: dict[str, Any]) -> None:
    from ._trees import print_trees

    path, torn = _local(run_file)
    threshold = float(header.get("pass_threshold", 1.0) or 1.0)
    if not print_trees(path, console, pass_threshold=threshold, allow_partial_tail=torn):
        console.print("no rollout trees in this run: make them with 'rolloutgym run ENV --branch-at every -n N'")


@app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(..., help="The baseline run file."),
    run_b: Path = typer.Argument(..., help="The run to compare with it."),
    force: bool = typer.Option(False, "--force", help="Compare even if the env versions differ."),
) -> None:
    """Per-task pass-rate and reward deltas between two runs of the same environment."""
    first, second = _summarized(run_a), _summarized(run_b)
    env_a, env_b = first.header["env"], second.header["env"]
    if (env_a["id"], env_a.get("version")) != (env_b["id"], env_b.get("version")) and not force:
        fail(
            f"{run_a} is a run of {env_a['id']} and {run_b} of {env_b['id']}; different environments or versions "
            "have different tasks or grading, so the numbers are not comparable. Pass --force to compare anyway."
        )
    summary_a, summary_b = first.summary, second.summary
    from ..mixtures import env_breakdown, is_mixture, position_envs

    envs_a, envs_b = position_envs(first.header), position_envs(second.header)
    tasks_a = {
        f"{envs_a[task.task_index]}:{task.task_id}" if envs_a else task.task_id: task for task in summary_a.tasks
    }
    tasks_b = {
        f"{envs_b[task.task_index]}:{task.task_id}" if envs_b else task.task_id: task for task in summary_b.tasks
    }
    print_table(_task_table(f"{first.header['policy']} → {second.header['policy']}", tasks_a, tasks_b))
    if is_mixture(first.header) or is_mixture(second.header):
        print_table(
            _env_table(env_breakdown(first.header, summary_a.tasks), env_breakdown(second.header, summary_b.tasks))
        )
    _print_overall(tasks_a, tasks_b, (summary_a, summary_b), (run_a, run_b))
    for name, summary in (("A", summary_a), ("B", summary_b)):
        if (attributed := attribution_text(summary)) is not None:
            console.print(f"{name}: {attributed}", markup=False)


# Tasks shown with the same numbers before the rest of them are folded into one row.
SAME_ROWS = 3


def collapse_identical(rows: list[list[Any]], keep: int = SAME_ROWS) -> list[list[Any]]:
    """``rows`` (a label, then numbers) with every group of more than ``keep`` rows of identical numbers shown as its
    first ``keep`` rows and one row "… N more alike" (the same numbers) at the place of the first one left out."""
    counts: dict[tuple[str, ...], int] = {}
    for row in rows:
        key = tuple(str(cell) for cell in row[1:])
        counts[key] = counts.get(key, 0) + 1
    shown: list[list[Any]] = []
    seen: dict[tuple[str, ...], int] = {}
    for row in rows:
        key = tuple(str(cell) for cell in row[1:])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= keep or counts[key] == keep + 1:
            shown.append(row)
        elif seen[key] == keep + 1:
            shown.append([f"… {counts[key] - keep} more alike", *row[1:]])
    return shown


def _task_table(title: str, tasks_a: dict[str, Any], tasks_b: dict[str, Any]) -> Table:
    """Pass rate and mean reward of each task in either run, with the deltas."""
    table = Table(title=title, title_justify="left")
    for column in ("task", "pass A", "pass B", "Δ pass", "reward A", "reward B", "Δ reward"):
        table.add_column(column, justify="left" if column == "task" else "right")
    rows: list[list[Any]] = []
    for task_id in sorted(set(tasks_a) | set(tasks_b)):
        a, b = tasks_a.get(task_id), tasks_b.get(task_id)
        if a is None or b is None:
            rows.append(
                [task_id, f"{a.pass_rate:.0%}" if a else "-", f"{b.pass_rate:.0%}" if b else "-", "-", "-", "-", "-"]
            )
            continue
        delta = b.pass_rate - a.pass_rate
        colour = "green" if delta > 0 else "red" if delta < 0 else ""
        rows.append(
            [
                task_id,
                f"{a.pass_rate:.0%}",
                f"{b.pass_rate:.0%}",
                Text(f"{delta:+.0%}", style=colour),
                _fmt(a.mean_reward),
                _fmt(b.mean_reward),
                f"{b.mean_reward - a.mean_reward:+.3f}",
            ]
        )
    for row in collapse_identical(rows):
        table.add_row(*row)
    return table


def _env_table(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]]) -> Table:
    """Per env of a mixture: the pass rates and mean rewards of run A's envs in both runs."""
    by_env_b = {row["env"]: row for row in rows_b}
    per_env = Table(title="Per env", title_justify="left")
    for column in ("env", "pass A", "pass B", "Δ pass", "reward A", "reward B", "Δ reward"):
        per_env.add_column(column, justify="left" if column == "env" else "right")
    for row in rows_a:
        other = by_env_b.get(row["env"])
        if other is None:
            per_env.add_row(row["env"], f"{row['pass_rate']:.0%}", "-", "-", _fmt(row["mean_reward"]), "-", "-")
            continue
        per_env.add_row(
            row["env"],
            f"{row['pass_rate']:.0%}",
            f"{other['pass_rate']:.0%}",
            f"{other['pass_rate'] - row['pass_rate']:+.0%}",
            _fmt(row["mean_reward"]),
            _fmt(other["mean_reward"]),
            f"{other['mean_reward'] - row['mean_reward']:+.3f}",
        )
    return per_env


def _print_overall(
    tasks_a: dict[str, Any], tasks_b: dict[str, Any], summaries: tuple[Any, Any], runs: tuple[Path, Path]
) -> None:
    """The overall pass rate and mean reward of both runs, over the tasks they have in common."""
    (summary_a, summary_b), (run_a, run_b) = summaries, runs
    common = sorted(set(tasks_a) & set(tasks_b))
    only_a, only_b = len(set(tasks_a) - set(tasks_b)), len(set(tasks_b) - set(tasks_a))
    pass_a, reward_a = _pooled([tasks_a[key] for key in common])
    pass_b, reward_b = _pooled([tasks_b[key] for key in common])
    if not common:
        console.print(
            f"the runs have no task in common ({len(tasks_a)} and {len(tasks_b)} tasks); "
            "the overall numbers below are each run's own."
        )
        pass_a, reward_a, pass_b, reward_b = (
            summary_a.pass_rate,
            summary_a.mean_reward,
            summary_b.pass_rate,
            summary_b.mean_reward,
        )
        label = "overall (different tasks) pass rate"
    elif only_a or only_b:
        console.print(
            f"the runs cover different tasks: {len(common)} in common, {only_a} only in A ({run_a}), "
            f"{only_b} only in B ({run_b}); the overall numbers below are over the common tasks only."
        )
        label = f"over the {len(common)} common tasks: pass rate"
    else:
        label = "overall pass rate"
    unscored = [f"{name} ({path})" for name, path, summary in (("A", run_a, summary_a), ("B", run_b, summary_b))
                if not summary.num_trajectories]  # fmt: skip
    if unscored:
        console.print(f"no scored episode in run {' and '.join(unscored)} (every episode errored): no pass rate to "
                      "compare; 'rolloutgym show' lists the errors")  # fmt: skip
        return
    console.print(
        f"{label} {pass_a:.1%} → {pass_b:.1%} ({pass_b - pass_a:+.1%}); "
        f"mean reward {_fmt(reward_a)} → {_fmt(reward_b)} ({reward_b - reward_a:+.3f})"
    )


def _pooled(tasks: list) -> tuple[float, float]:
    """Pass rate and mean reward over these tasks' trajectories (as the run summary pools them)."""
    count = sum(task.trajectories for task in tasks)
    if not count:
        return 0.0, 0.0
    return sum(task.passes for task in tasks) / count, sum(
        task.mean_reward * task.trajectories for task in tasks
    ) / count
