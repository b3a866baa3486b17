"""Time and peak memory of ``rolloutgym report`` on a large synthetic run, against ``rolloutgym show``.

The run file is generated: tasks x rollouts multi-turn tool-calling trajectories with token
ids and logprobs (the shape a vLLM run writes). Each measurement runs in a fresh process
so its peak resident memory (``ru_maxrss``) is its own:

* baseline: ``read_run`` + ``summarize`` (what ``rolloutgym show`` does: the whole run in memory),
* report:   ``build_report`` (streams the file; keeps a few numbers per trajectory).

Target: 10,000 trajectories -> report in under 30 s, with memory bounded (far below the
baseline's, and growing slowly with the number of trajectories).

    python benchmarks/report.py                      # 10,000 trajectories (and 2,500 for the growth)
    python benchmarks/report.py --tasks 250 --rollouts 8
    python benchmarks/report.py --browser            # also time Chromium opening the reports
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "order customer refund shipment invoice product price stock warehouse address email status pending "
    "delivered cancelled amount total quantity item return policy account payment card verify lookup"
).split()

MEASURE = r"""
import json, resource, sys, time
mode, run_path, out_path = sys.argv[1:4]
import rolloutgym.runs, rolloutgym.report  # imports are not part of the measurement
if mode == "report":
    import matplotlib.figure  # noqa: F401  (the report's plotting library, imported lazily)
usage = resource.getrusage(resource.RUSAGE_SELF)
base, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
started = time.perf_counter()
if mode == "show":
    run = rolloutgym.runs.read_run(run_path)
    summary = rolloutgym.runs.summarize(run.groups, header=run.header, task_indices=run.task_indices)
    size = 0
else:
    result = rolloutgym.report.build_report([run_path], out_path)
    summary, size = result.runs[0].summary, result.bytes
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
peak, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu_before
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_mib": peak / 1024, "growth_mib": (peak - base) / 1024,
                  "trajectories": summary.num_trajectories, "pass_rate": summary.pass_rate, "html_bytes": size}))
"""


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _trajectory(rng: random.Random, task: int, member: int, turns: int) -> tuple[dict, dict]:
    system = {"role": "system", "content": "You are a retail support agent. " + _sentence(rng, 120)}
    user = {"role": "user", "content": f"Task {task}: " + _sentence(rng, 40)}
    observation: list[dict] = [system, user]
    initial = observation
    steps = []
    for turn in range(turns):
        last = turn == turns - 1
        tokens = [rng.randrange(100, 50_000) for _ in range(rng.randrange(40, 120))]
        logprobs = [round(-rng.expovariate(2.0), 4) for _ in tokens]
        if last:
            action = {"role": "assistant", "content": "Done: " + _sentence(rng, 30)}
            next_observation: list[dict] = []
        else:
            call = {
                "id": f"call_{turn}",
                "name": rng.choice(["find_order", "issue_refund", "lookup_customer"]),
                "arguments": {"order_id": f"O{rng.randrange(10_000)}", "note": _sentence(rng, 6)},
            }
            action = {"role": "assistant", "content": _sentence(rng, 12), "tool_calls": [call]}
            next_observation = [
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": json.dumps({"status": rng.choice(WORDS), "detail": _sentence(rng, 25)}),
                }
            ]
        passed = rng.random() < 0.55
        info = {"invalid_actions": 0}
        if last:
            info["score"] = {
                "value": 1.0 if passed else 0.0,
                "components": {
                    "state": {
                        "value": 1.0 if passed else 0.0,
                        "components": {},
                        "metadata": {"diff": {} if passed else {"refunds": {"expected": 1, "actual": 0}}},
                        "feedback": "state matches" if passed else "refund missing for O17",
                    },
                    "answered": {"value": 1.0, "components": {}, "metadata": {}, "feedback": "answered"},
                },
                "metadata": {},
                "feedback": "passed" if passed else "failed: refund missing",
            }
        steps.append(
            {
                "observation": observation,
                "action": action,
                "reward": info.get("score", {}).get("value", 0.0),
                "next_observation": next_observation,
                "terminated": last,
                "truncated": False,
                "info": info,
                "policy_info": {"model": "synthetic"},
                "policy_tokens": tokens,
                "policy_logprobs": logprobs,
                "policy_stop_reason": "stop",
                "observation_tokens": [rng.randrange(100, 50_000) for _ in range(30 if turn else 400)],
            }
        )
        observation = next_observation
    trajectory = {
        "initial_observation": initial,
        "steps": steps,
        "initial_info": {},
        "terminated": True,
        "truncated": False,
        "metadata": {"task_id": f"task-{task:05d}", "member": member, "elapsed_seconds": rng.uniform(0.5, 4.0)},
        "stop_reason": "terminated",
    }
    return trajectory, steps[-1]["info"]["score"]


def write_run(path: Path, tasks: int, rollouts: int, seed: int = 0) -> None:
    """A synthetic run file: ``tasks`` groups of ``rollouts`` trajectories (about 4 turns each)."""
    rng = random.Random(seed)
    header = {
        "kind": "header",
        "format_version": 1,
        "run_id": "synthetic",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": "synthetic/support-v0", "version": 0},
        "policy": "vllm:synthetic",
        "num_rollouts": rollouts,
        "seed": seed,
        "tasks": [f"task-{index:05d}" for index in range(tasks)],
        "task_indices": list(range(tasks)),
    }
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header) + "\n")
        for task in range(tasks):
            members = [_trajectory(rng, task, member, rng.randrange(2, 7)) for member in range(rollouts)]
            errors = []
            if task % 50 == 7:  # a failed member now and then, as in real runs
                errors = [
                    {
                        "error_type": "TimeoutError",
                        "error_message": "model server timed out after 120 s",
                        "where": "policy",
                        "member": rollouts,
                        "traceback": None,
                        "step": 2,
                    }
                ]
            group = {
                "kind": "group",
                "task_index": task,
                "item": {"id": f"task-{task:05d}"},
                "item_id": f"task-{task:05d}",
                "trajectories": [member[0] for member in members],
                "scores": [member[1] for member in members],
                "errors": errors,
                "metadata": {},
            }
            handle.write(json.dumps(group, separators=(",", ":")) + "\n")


def measure(mode: str, run_path: Path, out_path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, mode, str(run_path), str(out_path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


BROWSER = r"""
import json, sys, time
from playwright.sync_api import sync_playwright
path = sys.argv[1]
args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
with sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    started = time.perf_counter()
    page.goto("file://" + path, wait_until="load", timeout=120_000)
    page.locator("section#run-0 .task-table tbody tr").first.wait_for()
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    page.locator("section#run-0 .task-table tbody tr").nth(3).click()
    page.locator("section#run-0 .members button").first.click()
    page.locator("section#run-0 [data-testid=trajectory]").wait_for()
    opened = time.perf_counter() - started
    browser.close()
print(json.dumps({"load_seconds": loaded, "open_seconds": opened}))
"""


def best_of(repeats: int, run_path: Path, out_path: Path) -> tuple[dict, dict]:
    """Interleaved show/report measurements; the fastest of each (the least disturbed by other load)."""
    shows, reports = [], []
    for _ in range(repeats):
        shows.append(measure("show", run_path, out_path.with_name("unused.html")))
        reports.append(measure("report", run_path, out_path))
    return min(shows, key=lambda item: item["seconds"]), min(reports, key=lambda item: item["seconds"])


def open_in_browser(html_path: Path) -> dict | None:
    """Time Chromium opening the report from disk and expanding one trajectory (None: no browser)."""
    if not Path("/usr/bin/chromium").exists():
        return None
    done = subprocess.run([sys.executable, "-c", BROWSER, str(html_path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"  (browser timing failed: {done.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=1250)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument(
        "--no-growth", action="store_true", help="skip the quarter-size run that shows how memory grows"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="measure each this many times (interleaved) and keep the fastest"
    )
    parser.add_argument(
        "--browser", action="store_true", help="also time headless Chromium opening each report (needs Playwright)"
    )
    arguments = parser.parse_args()
    sizes = [arguments.tasks] if arguments.no_growth else [max(1, arguments.tasks // 4), arguments.tasks]
    with tempfile.TemporaryDirectory(prefix="rolloutgym-report-bench-") as folder:
        results = []
        for tasks in sizes:
            run_path = Path(folder) / f"run-{tasks}.jsonl"
            started = time.perf_counter()
            write_run(run_path, tasks, arguments.rollouts)
            run_mib = run_path.stat().st_size / 2**20
            print(
                f"\n{tasks * arguments.rollouts:,} trajectories: run file {run_mib:,.0f} MiB (generated in "
                f"{time.perf_counter() - started:.1f} s)"
            )
            show, report = best_of(arguments.repeats, run_path, Path(folder) / f"report-{tasks}.html")
            assert show["pass_rate"] == report["pass_rate"] and show["trajectories"] == report["trajectories"]
            print(
                f"  show   (read_run + summarize): {show['seconds']:6.1f} s ({show['cpu_seconds']:5.1f} s CPU)   "
                f"peak RSS {show['peak_mib']:7.0f} MiB (+{show['growth_mib']:.0f} MiB)"
            )
            print(
                f"  report (build_report)        : {report['seconds']:6.1f} s ({report['cpu_seconds']:5.1f} s CPU)   "
                f"peak RSS {report['peak_mib']:7.0f} MiB (+{report['growth_mib']:.0f} MiB)   "
                f"HTML {report['html_bytes'] / 2**20:.1f} MiB ({report['html_bytes'] / 2**20 / run_mib:.2f}x the run "
                "file)"
            )
            print(
                f"  report / show: time {report['seconds'] / show['seconds']:.2f}x, memory growth "
                f"{report['growth_mib'] / max(show['growth_mib'], 1e-9):.2f}x"
            )
            if arguments.browser:
                timing = open_in_browser(Path(folder) / f"report-{tasks}.html")
                if timing:
                    print(
                        f"  Chromium: page loaded and task table drawn in {timing['load_seconds']:.1f} s; "
                        f"a task and its first trajectory expanded in {timing['open_seconds']:.2f} s"
                    )
            results.append((tasks, report))
        if len(results) == 2:
            (small_tasks, small), (large_tasks, large) = results
            print(
                f"\nreport memory growth from {small_tasks * arguments.rollouts:,} to "
                f"{large_tasks * arguments.rollouts:,} trajectories: "
                f"+{small['growth_mib']:.0f} MiB -> +{large['growth_mib']:.0f} MiB for a "
                f"{large_tasks / small_tasks:.0f}x larger run"
            )
        final = results[-1][1]
        verdict = "meets" if final["seconds"] < 30 else "MISSES"
        print(
            f"target: {results[-1][0] * arguments.rollouts:,} trajectories in < 30 s -> {final['seconds']:.1f} s wall, "
            f"{final['cpu_seconds']:.1f} s CPU, best of {arguments.repeats} ({verdict} the target)"
        )


if __name__ == "__main__":
    main()
