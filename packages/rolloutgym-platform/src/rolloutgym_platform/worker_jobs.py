"""A worker executing a claimed training job: through the ``rolloutgym train sft|dpo|grpo`` command that the TRL
plugin adds, in a child process, on the run's chosen rollouts (SFT), its run file (DPO) or its env (GRPO).

A job on a run whose env runs code a push key chose (a pushed Python env file, an MCP server: :mod:`.trust`)
trains in the sandbox as an unprivileged user (:func:`.worker_sandbox.train_sandboxed`): the command imports
that env, and it never does so with the worker's rights."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rolloutgym.install_hints import pip_install
from sqlalchemy.orm import Session, sessionmaker

from . import db, trust
from .models import EnvVersion, Job, RunRow
from .notify import Listener
from .worker_lease import Heartbeat, LeaseLost, describe
from .worker_sandbox import train_sandboxed

MAX_TRAINING_LOG = 64 << 20  # what the worker reads back of a training log (a sandboxed job wrote it)


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


def _code_env_folder(data: Path, version: EnvVersion | None) -> Path | None:
    """The folder of the run's pushed env version when that env runs code (None: a registered id or data)."""
    if version is None or version.kind == "id":
        return None
    folder = (data / version.entry).parent
    reason = trust.env_runs_code(folder, version.kind, version.entry, list(version.files or []))
    return folder if reason is not None else None


def _train(
    job: Job, source: str, out: Path, log_path: Path, heart: Heartbeat, sandbox: tuple[Path, Path] | None = None
) -> dict[str, Any]:
    """Train through the ``rolloutgym train METHOD`` command, in its own process.

    The core reaches the trainer the way a user does, through the command a plugin
    (``rolloutgym-trl``) adds, so the core imports no plugin and a crashed or
    memory-hungry training frees everything when its process ends. The child is stopped
    when this worker loses the job's lease (another worker trains it now).
    """
    started = time.perf_counter()
    if sandbox is not None:  # (the run file, the pushed env's folder): the job's folder is out's parent
        train_sandboxed(_train_command(job, source, out, log_path), out.parent, [sandbox[0]], sandbox[1], heart)
        return _trained(log_path, started)
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
        output = getattr(child, "output", "")
        if "No such command 'train'" in output:
            raise RuntimeError(f"training needs the TRL plugin on the workers: {pip_install('rolloutgym-trl')}")
        raise RuntimeError(failure_reason(output, child.returncode))
    return _trained(log_path, started)


MAX_REASON = 4000  # characters of a failed training's reason kept in the job's error


def failure_reason(output: str, returncode: int) -> str:
    """The reason a failed ``rolloutgym train`` gave, whole, on one line: from its last line that starts with
    ``error`` (the command's own ``error: ...``, or a usage error's box title) to the end, with the terminal's
    wrapping and box drawing undone; else its last line (a traceback's exception)."""
    lines = [line.strip(" │╭╰╮╯─") for line in output.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return f"rolloutgym train exited with {returncode}"
    start = max((index for index, line in enumerate(lines) if line.lower().startswith("error")), default=-1)
    reason = " ".join(lines[start:] if start >= 0 else lines[-1:])
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 1] + "…"


def _trained(log_path: Path, started: float) -> dict[str, Any]:
    """The job's result from its training log (steps, examples) and how long it took."""
    from rolloutgym.runs import read_training_log

    if log_path.is_symlink() or not log_path.is_file() or log_path.stat().st_size > MAX_TRAINING_LOG:
        raise RuntimeError("the training wrote no readable training log")
    log = read_training_log(log_path)
    steps = [record["step"] for record in log.steps if isinstance(record.get("step"), int)]
    result = {"steps": max(steps, default=0), "seconds": round(time.perf_counter() - started, 2)}
    if "examples" in log.header:
        result["examples"] = log.header["examples"]
    return result


def execute_job(
    sessions: sessionmaker[Session], data: Path, job: Job, owner: str, lease: float, listener: Listener | None = None
) -> None:
    from rolloutgym.runs import read_header
    from rolloutgym.sources import recorded_reference

    with sessions() as session:
        run = session.get(RunRow, job.source_run_id)
        version = session.get(EnvVersion, run.env_version_id)
    code_folder = _code_env_folder(data, version)
    folder = Path("models") / job.org / job.id / (f"attempt-{job.attempts}" if job.attempts > 1 else "")
    log_relative = folder / "training.jsonl"
    (data / folder).mkdir(parents=True, exist_ok=True)
    with Heartbeat(sessions, Job, job.id, owner, lease, listener) as heart:
        heart.values = {"log_path": str(log_relative)}
        heart.beat()
        try:
            source = str(data / run.path)
            if job.method == "grpo":
                source = recorded_reference(read_header(data / run.path)["env"], run_path=data / run.path)
            elif job.rollout_ids is not None and job.method == "sft":
                source = str(data / folder / "rollouts.jsonl")  # SFT on the chosen rollouts only
                select_rollouts(data / run.path, list(job.rollout_ids), Path(source))
            sandbox = (data / run.path, code_folder) if code_folder is not None else None
            result = _train(job, source, data / folder / "model", data / log_relative, heart, sandbox)
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
