"""Worker processes: claim queued runs and jobs from the database (with a lease) and execute them.

A run executes as ``rolloutgym run`` would, into the run file ``DATA/runs/ORG/RUN_ID.jsonl``,
always with ``resume``: a run whose worker died (its lease expired) is claimed again and
continues that file, so finished groups are neither lost nor run twice. Pushed Python env
files are imported here, in the worker process, never in the API process. Jobs train through
the ``rolloutgym train sft|dpo|grpo`` command that the TRL plugin adds, in a child process.

An idle worker waits on its :class:`~.notify.Listener`: the API wakes it when work is queued,
and it looks at the queue every ``--poll`` seconds anyway (a lease that ran out, a lost
wake-up). It tells the API when a row changed (its claim, each heartbeat, the end of a run or
job), which answers the clients waiting on that row. The claim is the only write before a run's
rollouts start (it records the lease and the run file's path), and the end is one write.

``python -m rolloutgym.platform.worker --data DIR [--database URL] [--poll S]`` runs one worker.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..install_hints import pip_install
from . import db
from .models import EnvVersion, Job, RunRow
from .notify import Listener


class LeaseLost(Exception):
    """Another worker holds the row now (this one was too slow to renew its lease)."""


def describe(exc: BaseException) -> str:
    """One line for a failed run or job: the error, and for user code the file and line it came from."""
    from rolloutgym_protocol.errors import RolloutGymError

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, RolloutGymError):
        return text
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{frame.filename}:{frame.lineno}: " for frame in reversed(frames) if "/envs/" in frame.filename), "")
    return f"{where}{type(exc).__name__}: {text}"


class Heartbeat:
    """Renews a lease every third of its length from a thread, writing the progress counters."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        model: Any,
        row_id: str,
        owner: str,
        lease: float,
        listener: Listener | None = None,
    ) -> None:
        self.sessions, self.model, self.row_id, self.owner, self.lease = sessions, model, row_id, owner, lease
        self.listener = listener
        self.values: dict[str, Any] = {}
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def beat(self) -> None:
        """Renew the lease now; once it is lost it stays lost (another worker may hold the row)."""
        from sqlalchemy.exc import SQLAlchemyError

        if self.lost:
            return
        try:
            renewed = db.renew(self.sessions, self.model, self.row_id, self.owner, self.lease, **dict(self.values))
        except SQLAlchemyError:  # the database is unreachable for now: the next beat tries again
            return
        if not renewed:
            self.lost = True
        elif self.listener is not None:  # the progress is in the database: clients waiting on the row look now
            self.listener.changed("run" if self.model is RunRow else "job", self.row_id, "running")

    def _loop(self) -> None:
        while not self._stop.wait(min(self.lease / 3, 2.0)):
            self.beat()


def _policy(sessions: sessionmaker[Session], data: Path, policy: str) -> str:
    """``job:ID`` is the model that job trained (``hf:PATH``); other policies as given."""
    if not policy.startswith("job:"):
        return policy
    with sessions() as session:
        job = session.get(Job, policy.removeprefix("job:"))
    if job is None or not job.model_path:
        raise LookupError(f"policy {policy}: the job has no trained model")
    return f"hf:{data / job.model_path}"


_ENV_VERSIONS: dict[tuple[str, int], EnvVersion] = {}


def _env_version(sessions: sessionmaker[Session], version_id: int) -> EnvVersion:
    """The pushed env version (a version never changes: it is read once per worker and database)."""
    key = (str(sessions.kw["bind"].url), version_id)
    if key not in _ENV_VERSIONS:
        with sessions() as session:
            _ENV_VERSIONS[key] = session.get(EnvVersion, version_id)
    return _ENV_VERSIONS[key]


def _run_config(sessions: sessionmaker[Session], data: Path, run: RunRow, out: Path, ray: str | None = None) -> Any:
    """The run's :class:`~rolloutgym.runner.RunConfig`: its rollouts on the Ray cluster ``ray`` when given."""
    from ..runner import RunConfig

    version = _env_version(sessions, run.env_version_id)
    options = {k: v for k, v in (run.options or {}).items() if k != "env_version"}
    if options.get("tasks"):
        options["tasks"] = [str(task) for task in options["tasks"]]
    return RunConfig(
        env=version.entry if version.kind == "id" else str(data / version.entry),
        policy=_policy(sessions, data, run.policy),
        num_rollouts=run.n,
        out=out,
        resume=True,
        **({"executor": "ray", "executor_options": {"address": ray}} if ray else {}),
        **options,
    )


def attempt_path(org: str, run_id: str, attempt: int) -> Path:
    """An attempt's run file, relative to DATA: ``runs/ORG/RUN_ID.jsonl``, then ``RUN_ID.attempt-N.jsonl``.

    Each claim of a run writes its own file, seeded with the finished groups of the file the
    previous attempt recorded; the database points at the file of the attempt that finishes.
    A worker that lost its lease but still runs (stalled, not dead) therefore only ever
    appends to its own, abandoned file: it cannot write a group twice into the recorded one.
    """
    name = f"{run_id}.jsonl" if attempt <= 1 else f"{run_id}.attempt-{attempt}.jsonl"
    return Path("runs") / org / name


def claim_values(before: Any) -> dict[str, Any]:
    """What a run's claim writes besides the lease: on a first attempt (no earlier run file), the path of the
    run file it writes. A later attempt records its path only once its file holds the earlier attempt's groups
    (:func:`execute_run`), so a worker dying in between loses nothing."""
    return {} if before.path else {"path": str(attempt_path(before.org, before.id, before.attempts + 1))}


def seed_from_previous(data: Path, previous: str | None, target: Path) -> None:
    """Copy the complete lines of the previous attempt's run file (a line cut off mid-write is left out)."""
    if not previous or not (data / previous).is_file() or (data / previous) == target:
        return
    content = (data / previous).read_bytes()
    target.write_bytes(content[: content.rfind(b"\n") + 1])


def _progress_hooks(heart: Heartbeat, run_id: str, pass_threshold: float) -> tuple[Any, Any]:
    """The runner's ``on_start``/``on_group``: the progress counters the heartbeat writes; a lost lease stops it."""
    counts = {"done": 0, "passes": 0, "trajectories": 0, "errors": 0}

    def on_start(header: dict[str, Any], remaining: int) -> None:
        counts["done"] = len(header.get("tasks") or []) - remaining if header.get("tasks") else 0
        heart.values = dict(heart.values, total=counts["done"] + remaining, done=counts["done"])

    def on_group(task_index: int, group: Any) -> None:
        if heart.lost:
            raise LeaseLost(run_id)
        counts["done"] += 1
        counts["passes"] += sum(score.value >= pass_threshold for score in group.scores)
        counts["trajectories"] += len(group.scores)
        counts["errors"] += len(group.errors)
        heart.values = dict(heart.values, **counts)

    return on_start, on_group


def execute_run(
    sessions: sessionmaker[Session],
    data: Path,
    run: RunRow,
    owner: str,
    lease: float,
    ray: str | None = None,
    listener: Listener | None = None,
    *,
    previous: str | None = None,
) -> None:
    """Execute a claimed run into this attempt's run file, seeded from ``previous`` (the run file of the
    attempt before, if any); the file's path is recorded once it is seeded (a first attempt's claim did)."""
    from ..runner import arun

    relative = attempt_path(run.org, run.id, run.attempts)
    out = data / relative
    out.parent.mkdir(parents=True, exist_ok=True)
    seed_from_previous(data, previous, out)
    with Heartbeat(sessions, RunRow, run.id, owner, lease, listener) as heart:
        heart.values = {"path": str(relative)}
        if run.path != str(relative):
            heart.beat()
            if heart.lost:
                return
        try:
            config = _run_config(sessions, data, run, out, ray)
            on_start, on_group = _progress_hooks(heart, run.id, config.pass_threshold)
            result = asyncio.run(arun(config, on_start=on_start, on_group=on_group))
        except Exception as exc:  # the run failed: record why, in one line (unless another worker holds it now)
            if not heart.lost:
                db.finish(sessions, RunRow, run.id, owner, "failed", error=describe(exc), **heart.values)
            return
    summary = result.summary
    finished = db.finish(
        sessions,
        RunRow,
        run.id,
        owner,
        "succeeded",
        path=str(relative),
        total=len(result.task_indices),  # not result.groups: that reads the whole run file back
        done=len(result.task_indices),
        passes=round(summary.pass_rate * summary.num_trajectories),
        trajectories=summary.num_trajectories,
        errors=summary.num_errors,
        pass_rate=summary.pass_rate,
    )
    if finished and relative.name != f"{run.id}.jsonl":
        for stale in out.parent.glob(f"{run.id}.*jsonl"):  # earlier attempts' files: superseded
            if stale != out:
                stale.unlink(missing_ok=True)


def _option_flags(options: dict[str, Any]) -> list[str]:
    """Job options as ``rolloutgym train`` flags: ``learning_rate=1e-5`` -> ``--learning-rate 1e-5``."""
    flags: list[str] = []
    for key, value in options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + flag[2:])
        elif value is not None:
            flags += [flag, str(value)]
    return flags


def select_rollouts(run_file: Path, rollout_ids: list[str], target: Path) -> int:
    """Write ``target``: the run file with only the rollouts ``TASK:MEMBER`` named in ``rollout_ids``.

    The ids are those of ``passing_rollout_ids`` (task index, then the position among the
    group's scored trajectories). Groups with none of them are left out; returns how many
    rollouts were kept.
    """
    import json

    chosen: dict[int, set[int]] = {}
    for rollout_id in rollout_ids:
        task, _, member = str(rollout_id).partition(":")
        chosen.setdefault(int(task), set()).add(int(member))
    kept = 0
    with run_file.open(encoding="utf-8") as source, target.open("w", encoding="utf-8") as out:
        out.write(source.readline())
        for line in source:
            if not line.endswith("\n"):
                break  # cut off mid-write
            group = json.loads(line)
            members = sorted(chosen.get(group.get("task_index"), set()) & set(range(len(group["trajectories"]))))
            if not members:
                continue
            group["trajectories"] = [group["trajectories"][index] for index in members]
            group["scores"] = [group["scores"][index] for index in members]
            group["errors"] = []
            kept += len(members)
            out.write(json.dumps(group) + "\n")
    return kept


def _train_command(job: Job, source: str, out: Path, log_path: Path) -> list[str]:
    options = dict(job.options or {})
    steps = options.pop("steps", 10)
    command = [sys.executable, "-m", "rolloutgym", "train", job.method, source, "--model", job.base_model]
    command += ["--out", str(out), "--log", str(log_path), "--no-eval", "--steps", str(steps)]
    return command + _option_flags(options)


def _train(job: Job, source: str, out: Path, log_path: Path, heart: Heartbeat) -> dict[str, Any]:
    """Train through the ``rolloutgym train METHOD`` command, in its own process.

    The core reaches the trainer the way a user does, through the command a plugin
    (``rolloutgym-trl``) adds, so the core imports no plugin and a crashed or
    memory-hungry training frees everything when its process ends. The child is stopped
    when this worker loses the job's lease (another worker trains it now).
    """
    from ..runs import read_training_log

    started = time.perf_counter()
    with subprocess.Popen(
        _train_command(job, source, out, log_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as child:
        reader = threading.Thread(target=lambda: setattr(child, "output", child.stdout.read()), daemon=True)
        reader.start()
        while child.poll() is None:
            if heart.lost:
                child.kill()
                child.wait()
                raise LeaseLost(job.id)
            time.sleep(0.2)
        reader.join()
    if child.returncode != 0:
        lines = [line for line in getattr(child, "output", "").strip().splitlines() if line.strip()]
        if any("No such command 'train'" in line for line in lines):
            raise RuntimeError(f"training needs the TRL plugin on the workers: {pip_install('rolloutgym-trl')}")
        raise RuntimeError(lines[-1].strip(" │╭╰─") if lines else f"rolloutgym train exited with {child.returncode}")
    log = read_training_log(log_path)
    steps = [record["step"] for record in log.steps if isinstance(record.get("step"), int)]
    result = {"steps": max(steps, default=0), "seconds": round(time.perf_counter() - started, 2)}
    if "examples" in log.header:
        result["examples"] = log.header["examples"]
    return result


def execute_job(
    sessions: sessionmaker[Session], data: Path, job: Job, owner: str, lease: float, listener: Listener | None = None
) -> None:
    from ..runs import read_header

    with sessions() as session:
        run = session.get(RunRow, job.source_run_id)
    folder = Path("models") / job.org / job.id / (f"attempt-{job.attempts}" if job.attempts > 1 else "")
    log_relative = folder / "training.jsonl"
    (data / folder).mkdir(parents=True, exist_ok=True)
    with Heartbeat(sessions, Job, job.id, owner, lease, listener) as heart:
        heart.values = {"log_path": str(log_relative)}
        heart.beat()
        try:
            source = str(data / run.path)
            if job.method == "grpo":
                source = read_header(data / run.path)["env"]["id"]
            elif job.rollout_ids is not None and job.method == "sft":
                source = str(data / folder / "rollouts.jsonl")  # SFT on the chosen rollouts only
                select_rollouts(data / run.path, list(job.rollout_ids), Path(source))
            result = _train(job, source, data / folder / "model", data / log_relative, heart)
        except Exception as exc:  # the job failed: record why, in one line (unless another worker holds it now)
            if not heart.lost:
                db.finish(sessions, Job, job.id, owner, "failed", error=describe(exc), **heart.values)
            return
    db.finish(
        sessions,
        Job,
        job.id,
        owner,
        "succeeded",
        model_path=str(folder / "model"),
        log_path=str(log_relative),
        result=result,
    )


def work_once(
    sessions: sessionmaker[Session],
    data: Path,
    owner: str,
    lease: float,
    ray: str | None = None,
    listener: Listener | None = None,
) -> bool:
    """Claim and execute one run (else one job); False when nothing was queued.

    The claim itself records the lease and the run file's path; the worker then reports the row
    changed (its clients see it running) and starts at once, with no other write before the work.
    """
    claimed = db.claim(sessions, RunRow, owner, lease, claim_values)
    if claimed is not None:
        run, before = claimed
        if listener is not None:
            listener.changed("run", run.id, run.state)
        execute_run(sessions, data, run, owner, lease, ray, listener, previous=before.path)
        if listener is not None:  # finished (or failed, or lost): the clients waiting on it look now
            listener.changed("run", run.id)
        return True
    claimed = db.claim(sessions, Job, owner, lease)
    if claimed is not None:
        job = claimed[0]
        execute_job(sessions, data, job, owner, lease, listener)
        if listener is not None:
            listener.changed("job", job.id)
        return True
    return False


def idle(listener: Listener, poll: float, alive: Any) -> None:
    """Wait until the API wakes this worker, or ``poll`` seconds pass; checks ``alive()`` every 5 s meanwhile."""
    deadline = time.monotonic() + poll
    while alive():
        remaining = deadline - time.monotonic()
        if remaining <= 0 or listener.wait(min(remaining, 5.0)):
            return


def work(
    data: str | Path,
    database: str | None = None,
    *,
    lease: float = 30.0,
    poll: float = 1.0,
    parent: int | None = None,
    ray: str | None = None,
) -> None:
    """Execute queued work until the process is stopped (or its ``parent`` process is gone).

    Between pieces of work it waits for the API's wake-up (work queued), or ``poll`` seconds.

    With ``ray`` (a Ray address such as ``auto`` or ``ray://HOST:10001``) each run's rollouts
    execute on that Ray cluster through rolloutgym's Ray executor; this process still claims
    the run, writes its run file and trains jobs.
    """
    data = Path(data).resolve()
    sessions = db.open_database(data, database)
    owner = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns() % 1_000_000}"
    listener = Listener(data)

    def alive() -> bool:
        return parent is None or os.getppid() == parent

    try:
        while alive():
            listener.hello()  # before looking at the queue: work queued after the look wakes this worker
            if not work_once(sessions, data, owner, lease, ray, listener):
                idle(listener, poll, alive)
    finally:
        listener.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rolloutgym.platform.worker")
    parser.add_argument("--data", required=True)
    parser.add_argument("--database", default=None)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--poll", type=float, default=1.0, help="Seconds between looks at the queue when idle.")
    parser.add_argument("--ray", default=None, help="Run the rollouts on this Ray cluster (e.g. auto).")
    parser.add_argument("--parent", type=int, default=None, help="Exit when this process (the server) is gone.")
    arguments = parser.parse_args(argv)
    try:
        work(
            arguments.data,
            arguments.database,
            lease=arguments.lease,
            poll=arguments.poll,
            parent=arguments.parent,
            ray=arguments.ray,
        )
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
