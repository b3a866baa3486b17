"""Time and peak memory of ``rolloutgym show`` and ``rolloutgym report`` on a large synthetic run.

The run file is generated: tasks x rollouts multi-turn tool-calling trajectories with token
ids and logprobs (the shape a vLLM run writes). Each measurement runs in a fresh process
so its peak resident memory (``ru_maxrss``) is its own:

* show:     ``summarize_run`` (what ``rolloutgym show`` does: streams the file, no group kept),
* show CLI: ``rolloutgym show RUN`` itself, output to /dev/null (import, summary, the bounded per-task table),
* report:   ``build_report`` (streams the file; keeps a few numbers per trajectory),
* in-memory (``--baseline``): ``read_run`` + ``summarize``, what ``show`` did before issue 30
  (every group in memory: about 60 MiB per 1,000 trajectories of this shape).

Targets (issue 30): 100,000 trajectories -> show in <= 5 s with bounded memory, report in <= 60 s.

    python benchmarks/report.py                      # 10,000 trajectories (and 2,500 for the growth)
    python benchmarks/report.py --tasks 12500 --no-growth --repeats 1     # 100,000
    python benchmarks/report.py --run-file RUN.jsonl  # measure an existing run file (not generated)
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
if mode == "in-memory":
    run = rolloutgym.runs.read_run(run_path)
    summary = rolloutgym.runs.summarize(run.groups, header=run.header, task_indices=run.task_indices)
    size = 0
elif mode == "show":
    summary, size = rolloutgym.runs.summarize_run(run_path).summary, 0
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


def best_of(repeats: int, run_path: Path, out_path: Path, modes: tuple[str, ...]) -> dict[str, dict]:
    """Interleaved measurements of each mode; the fastest of each (the least disturbed by other load)."""
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    for _ in range(repeats):
        for mode in modes:
            results[mode].append(
                measure(mode, run_path, out_path if mode == "report" else out_path.with_name("x.html"))
            )
    return {mode: min(values, key=lambda item: item["seconds"]) for mode, values in results.items()}


def _line(label: str, result: dict) -> str:
    return (
        f"  {label:<29}: {result['seconds']:6.1f} s ({result['cpu_seconds']:5.1f} s CPU)   "
        f"peak RSS {result['peak_mib']:7.0f} MiB (+{result['growth_mib']:.0f} MiB)"
    )


def show_cli(run_path: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``rolloutgym show RUN`` in a fresh process, output discarded."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-c", "from rolloutgym.cli import console_main; console_main()", "show", str(run_path)]
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


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
    parser.add_argument("--baseline", action="store_true", help="also measure read_run + summarize (in memory)")
    parser.add_argument("--run-file", type=Path, help="measure this run file instead of generating one")
    parser.add_argument(
        "--browser", action="store_true", help="also time headless Chromium opening each report (needs Playwright)"
    )
    arguments = parser.parse_args()
    modes = ("show", "report", "in-memory") if arguments.baseline else ("show", "report")
    sizes = (
        [arguments.tasks]
        if arguments.no_growth or arguments.run_file
        else [max(1, arguments.tasks // 4), arguments.tasks]
    )
    with tempfile.TemporaryDirectory(prefix="rolloutgym-report-bench-") as folder:
        results = []
        for tasks in sizes:
            run_path = arguments.run_file or Path(folder) / f"run-{tasks}.jsonl"
            started = time.perf_counter()
            if arguments.run_file is None:
                write_run(run_path, tasks, arguments.rollouts)
            run_mib = run_path.stat().st_size / 2**20
            measured = best_of(arguments.repeats, run_path, Path(folder) / f"report-{tasks}.html", modes)
            show, report = measured["show"], measured["report"]
            trajectories = show["trajectories"]
            print(
                f"\n{trajectories:,} trajectories: run file {run_mib:,.0f} MiB (generated in "
                f"{time.perf_counter() - started:.1f} s, measured included)"
            )
            assert show["pass_rate"] == report["pass_rate"] and show["trajectories"] == report["trajectories"]
            print(_line("show   (summarize_run)", show))
            print(
                _line("report (build_report)", report) + f"   HTML {report['html_bytes'] / 2**20:.1f} MiB "
                f"({report['html_bytes'] / 2**20 / run_mib:.2f}x the run file)"
            )
            cli_seconds, cli_cpu = min(show_cli(run_path) for _ in range(arguments.repeats))
            print(f"  {'show CLI (rolloutgym show)':<29}: {cli_seconds:6.1f} s ({cli_cpu:5.1f} s CPU)")
            if "in-memory" in measured:
                print(_line("in memory (read_run+summarize)", measured["in-memory"]))
                assert measured["in-memory"]["pass_rate"] == show["pass_rate"]
            if arguments.browser:
                timing = open_in_browser(Path(folder) / f"report-{tasks}.html")
                if timing:
                    print(
                        f"  Chromium: page loaded and task table drawn in {timing['load_seconds']:.1f} s; "
                        f"a task and its first trajectory expanded in {timing['open_seconds']:.2f} s"
                    )
            results.append((trajectories, measured))
        if len(results) == 2:
            (small_count, small), (large_count, large) = results
            for mode in ("show", "report"):
                print(
                    f"\n{mode} memory growth from {small_count:,} to {large_count:,} trajectories: "
                    f"+{small[mode]['growth_mib']:.0f} MiB -> +{large[mode]['growth_mib']:.0f} MiB"
                )
        count, final = results[-1]
        scale = 100_000 / count
        print(
            f"targets for 100,000 trajectories (scaled x{scale:g} from {count:,}): show "
            f"{final['show']['seconds'] * scale:.1f} s (<= 5 s), report {final['report']['seconds'] * scale:.1f} s "
            f"(<= 60 s); best of {arguments.repeats}, wall time"
        )


if __name__ == "__main__":
    main()
