"""The static parts of the report page: summary cards, pass@k table, error table, plots, layout.

Numbers shown here carry their exact value in ``data-value`` so tests (and scripts) can read
them back; the interactive parts (task table, trajectory viewer) are built by the inline
script from the ``#rg-data`` JSON.
"""

from __future__ import annotations

import json
import math
from html import escape
from importlib import resources
from typing import Any

from ..mixtures import env_breakdown, is_mixture
from ._collect import RunDigest

__all__ = ["asset", "comparison_rows", "json_script", "run_label", "run_section"]


def asset(name: str) -> str:
    """The text of a bundled asset (``report.css``, ``report.js``)."""
    return resources.files(__package__).joinpath("_assets", name).read_text(encoding="utf-8")


def json_script(element_id: str, data: Any) -> str:
    """``data`` as a JSON ``<script>`` element that no string inside it can close early."""
    text = json.dumps(_clean(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=repr)
    safe = text.replace("<", "\\u003c")  # '<' appears only inside strings, where \u003c means the same
    return f'<script type="application/json" id="{element_id}">{safe}</script>'


def _clean(value: Any) -> Any:
    """Replace NaN and infinities (not JSON) with None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


def run_label(digest: RunDigest) -> str:
    """A short name for a run: its policy and file name."""
    return f"{digest.header.get('policy', '?')} · {digest.path.name}"


def _number(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def _card(field: str, label: str, shown: str, value: Any, sub: str = "") -> str:
    sub_html = f'<div class="sub">{escape(sub)}</div>' if sub else ""
    raw = escape(json.dumps(_clean(value)), quote=True)
    return (
        f'<div class="card" data-field="{field}" data-value="{raw}"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(shown)}</div>{sub_html}</div>'
    )


def _reliability_card(summary: Any) -> list[str]:
    """pass^k at the largest k: how often every one of k tries passes (tau-bench's reliability)."""
    if not summary.pass_hat:
        return []
    k = max(summary.pass_hat)
    if k < 2:
        return []
    value = summary.pass_hat[k]
    return [_card("pass_hat_k", f"pass^{k}", _number(value), value, f"all {k} tries pass (reliability)")]


def _cards(digest: RunDigest) -> str:
    summary = digest.summary
    header = digest.header
    cards = [
        _card(
            "pass_rate",
            "pass rate",
            f"{summary.pass_rate:.1%}" if summary.num_trajectories else "none scored",
            summary.pass_rate if summary.num_trajectories else None,
            f"threshold {header.get('pass_threshold', 1.0)}"
            if summary.num_trajectories
            else f"no episode was scored: {summary.num_errors} errors",
        ),
        _card("mean_reward", "mean reward", _number(summary.mean_reward), summary.mean_reward),
        *_reliability_card(summary),
        _card(
            "num_tasks",
            "tasks",
            str(summary.num_tasks),
            summary.num_tasks,
            f"n = {header.get('num_rollouts')} rollouts each",
        ),
        _card("num_trajectories", "trajectories", str(summary.num_trajectories), summary.num_trajectories),
        _card("num_errors", "errors", str(summary.num_errors), summary.num_errors, "failed members, not scored"),
        _card("mean_turns", "mean turns", f"{summary.mean_turns:.1f}", summary.mean_turns),
        _card("total_seconds", "time", f"{summary.total_seconds:.2f} s", summary.total_seconds, "summed over rollouts"),
        _card(
            "total_tokens",
            "tokens",
            f"{summary.total_tokens:,}",
            summary.total_tokens,
            f"{summary.generated_tokens:,} generated" if summary.total_tokens else "no token-level data",
        ),
    ]
    return f'<div class="cards">{"".join(cards)}</div>'


def _pass_at_k_table(digest: RunDigest) -> str:
    summary = digest.summary
    if not summary.pass_at:
        return ""
    ks = sorted(summary.pass_at)
    head = "".join(f"<th>k = {k}</th>" for k in ks)
    at = "".join(f'<td data-k="{k}" data-value="{summary.pass_at[k]!r}">{_number(summary.pass_at[k])}</td>' for k in ks)
    hat = "".join(
        f'<td data-k="{k}" data-value="{summary.pass_hat[k]!r}">{_number(summary.pass_hat[k])}</td>' for k in ks
    )
    return (
        '<table class="passk"><thead><tr><th></th>' + head + "</tr></thead><tbody>"
        f'<tr data-field="pass_at"><td>pass@k</td>{at}</tr><tr '
        f'data-field="pass_hat"><td>pass^k</td>{hat}</tr></tbody></table>'
    )


def _per_env_table(digest: RunDigest) -> str:
    """A run of an env mixture (``--mix``): pass rate, reward, turns and errors per env."""
    if not is_mixture(digest.header):
        return ""
    rows = "".join(
        f'<tr data-env="{escape(row["env"], quote=True)}"><td>{escape(row["env"])}</td><td>{row["weight"]:g}</td>'
        f'<td data-field="tasks">{row["tasks"]}</td><td data-field="trajectories">{row["trajectories"]}</td>'
        f'<td data-field="pass_rate" data-value="{row["pass_rate"]!r}">{row["pass_rate"]:.0%}</td>'
        f'<td data-field="mean_reward" data-value="{row["mean_reward"]!r}">{_number(row["mean_reward"])}</td>'
        f'<td>{row["mean_turns"]:.1f}</td><td data-field="errors">{row["errors"]}</td></tr>'
        for row in env_breakdown(digest.header, digest.tasks)
    )
    return (
        '<h2>Per env</h2><table class="per-env" data-field="per_env"><thead><tr><th>env</th><th>weight</th>'
        "<th>tasks</th><th>trajectories</th><th>pass rate</th><th>mean reward</th><th>turns</th><th>errors</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def _errors_by_type(digest: RunDigest) -> str:
    errors = digest.summary.errors_by_type
    if not errors:
        return '<p class="muted" data-field="errors_by_type" data-value="{}">No failed members.</p>'
    examples = digest.summary.error_examples
    rows = "".join(
        f'<tr data-type="{escape(name, quote=True)}"><td>{escape(name)}</td><td data-value="{count}">{count}</td>'
        f'<td class="message">{escape(examples.get(name, ""))}</td></tr>'
        for name, count in sorted(errors.items(), key=lambda item: (-item[1], item[0]))
    )
    return (
        '<table class="errors-by-type" data-field="errors_by_type"><thead><tr><th>error type</th><th>members</th><th '
        'style="text-align:left">example</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        '<p class="muted">Click an error to open the failed member.</p><div class="error-list"></div>'
    )


def _attribution(digest: RunDigest) -> str:
    """Failed trajectories per party their scores' attribution names (nothing when no score carries one)."""
    table = getattr(digest.summary, "failures_by_party", None)
    if not table:
        return ""
    rows = "".join(
        f'<tr data-party="{escape(party, quote=True)}"><td>{escape(party)}</td>'
        f'<td data-value="{count}">{count}</td></tr>'
        for party, count in table.items()
    )
    return (
        '<h2>Failures by party</h2><table class="attribution" data-field="failures_by_party"><thead><tr>'
        f"<th>party</th><th>failed trajectories</th></tr></thead><tbody>{rows}</tbody></table>"
        f'<p class="muted">Pass rate with the non-agent failures left out: '
        f'<span data-field="agent_pass_rate">{digest.summary.agent_pass_rate:.1%}</span>.</p>'
    )


def run_section(index: int, digest: RunDigest, plots: list[str], *, hidden: bool) -> str:
    """The ``<section>`` of one run: title, summary, plots, errors and the task browser."""
    header = digest.header
    env = header.get("env", {})
    versions = ", ".join(f"{name} {version}" for name, version in sorted(header.get("versions", {}).items()) if version)
    meta = (
        f"{escape(str(digest.path))} · run {escape(str(header.get('run_id')))} · created "
        f"{escape(str(header.get('created_at')))}"
        f" · seed {escape(str(header.get('seed') if header.get('seed') is not None else '-'))}"
        + (f" · {escape(versions)}" if versions else "")
    )
    warning = ""
    if not digest.complete:
        warning = (
            f'<div class="warning">Incomplete run: {digest.num_missing} task(s) of the header have no group yet; '
            f"continue it with <code>rolloutgym run ... --out {escape(str(digest.path))} --resume</code>.</div>"
        )
    figures = "".join(f"<figure>{plot}</figure>" for plot in plots)
    return f"""
<section class="view" id="run-{index}" data-run="{index}"{" hidden" if hidden else ""}>
  <div class="run-title" data-field="title"><span data-field="env_id">{escape(str(env.get("id")))}</span>
    <span class="muted">v{escape(str(env.get("version")))}</span> · policy
    <span data-field="policy">{escape(str(header.get("policy")))}</span></div>
  <div class="run-meta">{meta}</div>
  {warning}
  {_cards(digest)}
  {_pass_at_k_table(digest)}
  {_per_env_table(digest)}
  <div class="plots">{figures}</div>
  {_attribution(digest)}
  <h2>Errors</h2>
  {_errors_by_type(digest)}
  <h2>Tasks</h2>
  <div class="browser">
    <div class="task-pane">
      <div class="tools">
        <input class="task-filter" type="search" placeholder="filter tasks by id" aria-label="filter tasks">
        <select class="task-outcome" aria-label="show tasks">
          <option value="all">all tasks</option><option value="failing">not always passing</option>
          <option value="passing">always passing</option><option value="errors">with errors</option>
        </select>
      </div>
      <div class="scroll task-table"></div>
      <div class="count task-count"></div>
    </div>
    <div class="detail-pane"><div class="placeholder">Click a task to see its trajectories.</div></div>
  </div>
</section>"""


def comparison_rows(baseline: RunDigest, other: RunDigest) -> list[dict[str, Any]]:
    """Per-task pass-rate and reward deltas (``other`` minus ``baseline``), keyed by task id."""
    tasks_a = {task.task_id: task for task in baseline.summary.tasks}
    tasks_b = {task.task_id: task for task in other.summary.tasks}
    rows = []
    for task_id in sorted(set(tasks_a) | set(tasks_b)):
        a, b = tasks_a.get(task_id), tasks_b.get(task_id)
        both = a is not None and b is not None
        rows.append(
            {
                "task_id": task_id,
                "pass_a": a.pass_rate if a else None,
                "pass_b": b.pass_rate if b else None,
                "delta_pass": b.pass_rate - a.pass_rate if both else None,  # type: ignore[union-attr]
                "reward_a": a.mean_reward if a else None,
                "reward_b": b.mean_reward if b else None,
                "delta_reward": b.mean_reward - a.mean_reward if both else None,  # type: ignore[union-attr]
            }
        )
    return rows
