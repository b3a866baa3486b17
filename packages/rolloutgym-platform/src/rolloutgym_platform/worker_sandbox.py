"""Runs that execute code a push key chose run in a sandbox as an unprivileged user, never with the worker's rights.

A run whose policy or env runs code (:mod:`.trust`: a Python env file, an MCP server's command, a
template that runs code, the ``harness`` provider, any provider but the vetted ones) is executed by
:func:`execute_sandboxed`: ``python -I -m rolloutgym_platform.sandboxed_run`` under
:func:`rolloutgym.sandboxes.run_isolated`, as a fresh unprivileged uid with no network and no
inherited environment variable. It sees ``/usr``, the installed Python packages (read-only), the
folder of the run's env version (read-only, at its own path, so the run file records the env as
usual), the one run file or trained model its ``replay:``/``job:`` policy names (read-only), the
worker's Hugging Face hub cache (read-only, token files hidden: a model named by name loads
offline), and its own folder (``DATA/sandboxes/RUN_ID/work``, writable). The rest of the data
folder (the database file, the organisation's other envs and runs, other organisations' data), the
worker's environment (database URL, API keys) and home folder are not there. The worker copies the
run file back as a regular file (a link the code left is not followed). A training job on a run
whose env runs code trains the same way (:func:`train_sandboxed`).

A hosted model is reached through :class:`rolloutgym.sandboxes.CredentialProxy`: the sandbox's
``127.0.0.1:8321`` goes to the worker's configured ``OPENAI_BASE_URL`` with the worker's
``OPENAI_API_KEY`` put in by the worker; the sandbox sees neither. A policy option that names
another endpoint or key (``base_url``, ``api_key``, ``headers``) and providers that need a network
of their own (``tinker``) are refused with that reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from rolloutgym.sandboxes import CredentialProxy, Isolation, run_isolated
from rolloutgym_protocol.errors import RolloutGymError

from . import trust

__all__ = ["SandboxedRunError", "execute_sandboxed", "runs_code", "train_sandboxed"]

RELAY_PORT = 8321
_COUNTERS = ("total", "done", "passes", "trajectories", "errors")
_ENDPOINT_OPTIONS = ("base_url", "api_key", "headers", "organization", "project")


class SandboxedRunError(RolloutGymError):
    """A sandboxed run that did not finish: the one line it reported, or how its process ended."""


def runs_code(folder: Path, run: Any, version: Any) -> str | None:
    """What, in the run's policy or env version, runs code (None: the run executes in the worker)."""
    options = (run.options or {}).get("policy_options")
    try:
        reason = trust.policy_runs_code(run.policy, options)
        return reason or trust.env_runs_code(folder, version.kind, version.entry, list(version.files or []))
    except trust.TrustError as refused:
        raise PermissionError(refused.message) from None


def _model_access(config: dict[str, Any], socket_path: Path) -> tuple[dict[str, str], CredentialProxy | None]:
    """The sandbox's variables for the policy's model and the proxy (on ``socket_path``) that reaches it."""
    options = config.get("policy_options") or {}
    policy, model = str(config.get("policy", "")), str(options.get("model", ""))
    named = [name for name in _ENDPOINT_OPTIONS if name in options]
    if named:
        raise PermissionError(
            f"policy option {named[0]!r}: a run that executes pushed code reaches a model only through the "
            "worker's configured endpoint (OPENAI_BASE_URL); drop the option"
        )
    if "tinker:" in (policy + " " + model):
        raise PermissionError("tinker: needs a network of its own, which a run that executes pushed code has not")
    if not (policy.startswith("openai:") or model.startswith("openai:")):
        return {}, None
    upstream = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    key = os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    variables = {"OPENAI_BASE_URL": f"http://127.0.0.1:{RELAY_PORT}", "OPENAI_API_KEY": "sandboxed"}
    return variables, CredentialProxy(upstream, headers, socket_path)


def _hub_cache() -> tuple[list[Path], list[Path], dict[str, str]]:
    """The worker's Hugging Face cache, read-only (models a run names by name load offline); its tokens hidden."""
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    hub = Path(os.environ.get("HF_HUB_CACHE") or home / "hub")
    if not hub.is_dir() or hub.stat().st_mode & 0o005 != 0o005:
        return [], [], {}
    return [hub], [home / "token", home / "stored_tokens", hub / "token"], {"HF_HUB_CACHE": str(hub)}


def _open_to_sandbox(folder: Path) -> None:
    """Let the sandbox's uid read the env version's folder (its own files only; links removed, never followed)."""
    for directory, _folders, names in os.walk(folder):
        os.chmod(directory, 0o755)
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.chmod(path, 0o644)


def _copy_back(source: Path, target: Path) -> None:
    """The sandbox's run file, copied only when it is a regular file (never through a link it left)."""
    try:
        descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return
        with open(target, "wb") as out:
            shutil.copyfileobj(handle, out)


class _Progress(threading.Thread):
    """Reads the sandboxed run's progress lines: counters for the heartbeat, its final numbers or its error."""

    def __init__(self, descriptor: int, heart: Any) -> None:
        super().__init__(name="sandboxed-run-progress", daemon=True)
        self.stream = os.fdopen(descriptor, "r", encoding="utf-8", errors="replace")
        self.heart = heart
        self.final: dict[str, Any] | None = None
        self.error: str | None = None

    def run(self) -> None:
        with self.stream:
            while not self.heart.lost:
                line = self.stream.readline(65536)
                if not line:
                    return
                self._take(line)

    def _take(self, line: str) -> None:
        try:
            values = json.loads(line)
        except ValueError:
            return
        if not isinstance(values, dict):
            return
        if isinstance(values.get("error"), str):
            self.error = "".join(c for c in values["error"][:500] if c.isprintable())
        final = values.get("final")
        counters = _counters(final if isinstance(final, dict) else values)
        if isinstance(final, dict) and counters is not None:
            rate = final.get("pass_rate")
            if isinstance(rate, (int, float)) and 0 <= rate <= 1:
                self.final = dict(counters, pass_rate=float(rate))
        if counters:
            self.heart.values = dict(self.heart.values, **counters)


def _counters(values: dict[str, Any]) -> dict[str, int] | None:
    taken = {name: values[name] for name in _COUNTERS if name in values}
    if not all(type(value) is int and 0 <= value < 10**9 for value in taken.values()):
        return None
    return taken


def _prepare(config: dict[str, Any], data: Path, base: Path, out: Path) -> list[Path]:
    """Point the config at the sandbox's copies; the read-only paths its policy needs."""
    work = base / "work"
    work.mkdir(parents=True)
    reads = []
    env = Path(str(config["env"]))
    if env.is_absolute() and env.exists():  # the version's own folder, at its path (the run file records it)
        _open_to_sandbox(env.parent)
        reads.append(env.parent)
    provider, _, rest = str(config.get("policy", "")).partition(":")
    if provider in ("hf", "replay") and Path(rest).is_absolute() and Path(rest).exists():
        path = Path(rest)  # the organisation's own trained model or run file (resolved by the worker)
        _open_to_sandbox(path) if path.is_dir() else path.chmod(0o644)
        reads.append(path)
    if out.is_file():
        shutil.copyfile(out, work / "run.jsonl")
    config.update(out=str(work / "run.jsonl"), hide=str(data))
    for name in ("executor", "executor_options"):  # no network in the sandbox: the rollouts run there
        config.pop(name, None)
    return reads


def execute_sandboxed(config: dict[str, Any], data: Path, run_id: str, out: Path, heart: Any) -> dict[str, Any]:
    """Run ``config`` (:class:`~rolloutgym.RunConfig` keywords) in the sandbox; its final counters (``total``,
    ``done``, ``passes``, ``trajectories``, ``errors``, ``pass_rate``). The run file is copied to ``out``
    whatever the end; a run that did not finish raises :class:`SandboxedRunError` with its one line."""
    base = data / "sandboxes" / run_id
    shutil.rmtree(base, ignore_errors=True)
    sockets = Path(tempfile.mkdtemp(prefix="rg-model-"))  # short: a Unix socket's path has at most 107 bytes
    try:
        reads = _prepare(config, data, base, out)
        variables, proxy = _model_access(config, sockets / "model.sock")
        forward = [(RELAY_PORT, str(sockets / "model.sock"))] if proxy is not None else []
        cache, tokens, cache_variables = _hub_cache()
        isolation = Isolation(
            writable=base / "work",
            read_only=[*reads, *cache],
            hidden=[data, *tokens],
            environment={**variables, **cache_variables},
            forward=forward,
        )
        read_end, write_end = os.pipe()
        progress = _Progress(read_end, heart)
        progress.start()
        command = [sys.executable, "-I", "-m", "rolloutgym_platform.sandboxed_run", str(write_end)]
        try:
            with proxy or contextlib.nullcontext():
                ended = run_isolated(
                    command,
                    isolation,
                    input=json.dumps(config).encode(),
                    pass_fds=[write_end],
                    stop=lambda: bool(heart.lost),
                )
        finally:
            os.close(write_end)
        progress.join(timeout=30)
        _copy_back(base / "work" / "run.jsonl", out)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(sockets, ignore_errors=True)
    if ended.returncode == 0 and progress.final is not None:
        return progress.final
    if progress.error:
        raise SandboxedRunError(progress.error)
    last = next((line for line in reversed(ended.stderr_tail.splitlines()) if line.strip()), "")
    raise SandboxedRunError(f"the sandboxed run ended with status {ended.returncode}: {last[:300]}".rstrip(": "))


def _reclaim(folder: Path) -> None:
    """Take back what the sandbox wrote in ``folder``: every link removed (the worker reads what is there, never
    through a link), the rest owned by the worker again and readable (a later sandbox of the organisation reads
    the model under another uid)."""
    for directory, folders, names in os.walk(folder):
        for name in [*folders, *names]:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                os.unlink(path)
            elif name in names:
                os.chown(path, os.getuid(), os.getgid(), follow_symlinks=False)
                os.chmod(path, 0o644)
        os.chown(directory, os.getuid(), os.getgid(), follow_symlinks=False)
        os.chmod(directory, 0o755)


def train_sandboxed(command: list[str], folder: Path, reads: list[Path], env_folder: Path | None, heart: Any) -> None:
    """Run a training command (``rolloutgym train ...``) in the sandbox: ``folder`` (the job's, under the data
    folder) is its only writable place, ``reads`` (the run file) and ``env_folder`` (a pushed env version's) are
    read-only, the hub cache too. Raises :class:`SandboxedRunError` with its last line when it fails."""
    cache, tokens, cache_variables = _hub_cache()
    if env_folder is not None:
        _open_to_sandbox(env_folder)
    isolation = Isolation(
        writable=folder,
        read_only=[*reads, *([env_folder] if env_folder is not None else []), *cache],
        hidden=tokens,
        environment=cache_variables,
    )
    ended = run_isolated([sys.executable, "-I", *command[1:]], isolation, stop=lambda: bool(heart.lost))
    _reclaim(folder)
    if ended.returncode != 0 and not heart.lost:
        lines = [line for line in ended.stderr_tail.splitlines() if line.strip()]
        raise SandboxedRunError(lines[-1].strip(" │╭╰─")[:300] if lines else f"training exited with {ended.returncode}")
