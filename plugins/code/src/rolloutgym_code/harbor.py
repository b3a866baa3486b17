"""Harbor task directories as an env: ``rolloutgym run path/to/tasks/ --policy ...``.

A folder holding ``task.toml`` (one task) or subfolders that do (a task set) is read here,
through the ``harbor`` template's ``folder_loader`` (the core never names Harbor). Each task
folder has Harbor's layout::

    instruction.md   what the agent is asked to do
    task.toml        [metadata], [agent] timeout_sec, [verifier] timeout_sec and env, [environment] workdir, ...
    environment/     Dockerfile (NOT built: its COPY lines seed the workspace, its WORKDIR is the working folder)
    tests/test.sh    the verifier: writes /logs/verifier/reward.txt (a number) or reward.json
    solution/solve.sh  the reference solution (the oracle policy)

The episode runs in :class:`~rolloutgym_code._harbor_sandbox.EpisodeSandbox`: the agent's
``bash`` tool runs each command in a fresh bubblewrap sandbox whose only host folder is the
episode's workspace (at ``/app``, or the Dockerfile's ``WORKDIR``). ``tests/``, ``solution/``
and ``/logs/verifier`` are not in it. After the episode, on the trusted side, ``tests/test.sh``
runs in a new sandbox with the workspace, ``/tests`` (read-only) and a fresh ``/logs/verifier``;
the reward is read from there by this process (never through a symlink).
"""

from __future__ import annotations

import json
import math
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.errors import EnvFileError

from ._harbor_sandbox import EpisodeSandbox, check_workdir
from ._paths import check_relative_path, read_regular_file
from .sandbox import SandboxLimits

__all__ = ["HarborTask", "HarborTaskEnv", "compile_harbor", "load_harbor_folder", "read_task"]

MARKER = "task.toml"
_SECTIONS = {
    "schema_version",
    "task",
    "metadata",
    "verifier",
    "agent",
    "environment",
    "solution",
    "source",
    "artifacts",
}
_MAX_SEED_BYTES = 64 << 20

_SYSTEM_PROMPT = (
    "You are working in a Linux shell, in the folder {workdir}. Run commands with the bash tool (each call is a "
    "fresh shell in the same folder: files persist, background processes and `cd` do not). There is no network. "
    "When you are done, call submit (or answer without a tool call); the task's tests will then check your work."
)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the task's working folder and return its output and exit status.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
}
SUBMIT_TOOL = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Finish: the task's tests check the working folder as it is.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}


@dataclass(frozen=True)
class HarborTask:
    """One Harbor task folder, read from disk (paths only: tests and solution stay on disk)."""

    id: str
    path: str
    instruction: str
    workdir: str = "/app"
    seed: Mapping[str, str] = field(default_factory=dict)  # workspace path -> host file
    agent_timeout: float = 600.0
    verifier_timeout: float = 600.0
    verifier_env: Mapping[str, str] = field(default_factory=dict)
    solution_env: Mapping[str, str] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()  # task.toml settings this sandbox does not honour


# -- reading a task folder ----------------------------------------------------------------


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        line = found.group(1) if found else "1"
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
        raise EnvFileError(f"{path}:{line}: not valid TOML ({reason}); fix the line and run again") from None
    except UnicodeDecodeError:
        raise EnvFileError(f"{path}:1: not UTF-8 text") from None


def _table(data: Mapping[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise EnvFileError(f"{path}: [{name}] must be a table, got {type(value).__name__}")
    return value


def _seconds(table: Mapping[str, Any], section: str, path: Path, default: float) -> float:
    value = table.get("timeout_sec", default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e7:
        raise EnvFileError(f"{path}: [{section}] timeout_sec must be a positive number of seconds, got {value!r}")
    return float(value)


def _strings(table: Mapping[str, Any], section: str, path: Path) -> dict[str, str]:
    value = table.get("env", {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise EnvFileError(f"{path}: [{section}] env must be a table of strings")
    return dict(value)


def _dockerfile(environment_dir: Path) -> tuple[str | None, list[tuple[str, str]]]:
    """The last ``WORKDIR`` and the ``COPY``/``ADD`` pairs (source, destination) of the Dockerfile."""
    dockerfile = environment_dir / "Dockerfile"
    if not dockerfile.is_file():
        return None, []
    workdir: str | None = None
    copies: list[tuple[str, str]] = []
    text = dockerfile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    for line in text.splitlines():
        words = line.strip().split()
        if not words or words[0].startswith("#"):
            continue
        instruction = words[0].upper()
        if instruction == "WORKDIR" and len(words) >= 2:
            target = words[1]
            workdir = target if target.startswith("/") else f"{(workdir or '/').rstrip('/')}/{target}"
        elif instruction in ("COPY", "ADD"):
            arguments = [word for word in words[1:] if not word.startswith("--")]
            if len(arguments) >= 2 and not arguments[0].startswith("["):
                destination = arguments[-1]
                if not destination.startswith("/"):
                    destination = f"{(workdir or '/').rstrip('/')}/{destination}"
                copies += [(source, destination) for source in arguments[:-1]]
    return workdir, copies


def _seed_files(environment_dir: Path, workdir: str, copies: list[tuple[str, str]]) -> dict[str, str]:
    """Workspace path -> host file, for the Dockerfile's COPY/ADD lines that land in ``workdir``."""
    seed: dict[str, str] = {}
    root = environment_dir.resolve()
    for source, destination in copies:
        if "://" in source:
            continue
        if destination.rstrip("/") != workdir and not destination.startswith(workdir + "/"):
            continue
        relative = destination[len(workdir) :].strip("/")
        origin = (environment_dir / source).resolve()
        if not origin.is_relative_to(root) or not origin.exists():
            continue
        if origin.is_dir():
            for file in sorted(origin.rglob("*")):
                if file.is_file() and not file.is_symlink():
                    inside = file.relative_to(origin).as_posix()
                    seed[str(PurePosixPath(relative, inside))] = str(file)
        elif origin.is_file():
            target = relative if relative and not destination.endswith("/") else origin.name
            if relative and destination.endswith("/"):
                target = f"{relative}/{origin.name}"
            seed[target] = str(origin)
    return {check_relative_path(path).as_posix(): host for path, host in seed.items()}


def read_task(folder: str | Path) -> HarborTask:
    """One task folder (``instruction.md``, ``task.toml``, ``tests/test.sh``, ...).

    Raises:
        EnvFileError: a missing file or a malformed ``task.toml`` (``path:line: ...``).
    """
    folder = Path(folder).resolve()
    config_path = folder / MARKER
    data = _toml(config_path)
    instruction_path = folder / "instruction.md"
    if not instruction_path.is_file():
        raise EnvFileError(f"{folder}: no instruction.md (a Harbor task needs instruction.md, task.toml, tests/)")
    if not (folder / "tests" / "test.sh").is_file():
        raise EnvFileError(f"{folder}: no tests/test.sh (the verifier that writes /logs/verifier/reward.txt)")
    instruction = instruction_path.read_text(encoding="utf-8", errors="replace")
    if not instruction.strip():
        raise EnvFileError(f"{instruction_path}: empty; write what the agent is asked to do")
    if data.get("steps"):
        raise EnvFileError(f"{config_path}: multi-step tasks ([[steps]]) are not supported; give one task per folder")
    agent = _table(data, "agent", config_path)
    verifier = _table(data, "verifier", config_path)
    environment = _table(data, "environment", config_path)
    solution = _table(data, "solution", config_path)
    metadata = _table(data, "metadata", config_path)
    package = _table(data, "task", config_path)
    docker_workdir, copies = _dockerfile(folder / "environment")
    workdir = environment.get("workdir") or docker_workdir or "/app"
    if not isinstance(workdir, str) or check_workdir(workdir.rstrip("/") or "/"):
        raise EnvFileError(f"{config_path}: [environment] workdir: {check_workdir(str(workdir))}")
    workdir = workdir.rstrip("/")
    ignored = [f"[{name}]" for name in sorted(set(data) - _SECTIONS)]
    ignored += [
        f"[environment] {key}"
        for key in ("docker_image", "cpus", "memory_mb", "storage_mb", "gpus", "allow_internet", "network_mode")
        if key in environment
    ]
    if "timeout_sec" in agent:
        ignored.append("[agent] timeout_sec (not enforced: give the run a --timeout)")
    if (folder / "tests" / "Dockerfile").is_file():
        ignored.append("tests/Dockerfile (a separate verifier image: not built; the tests run in the sandbox)")
    if (folder / "environment" / "Dockerfile").is_file():
        ignored.append("environment/Dockerfile (not built: only its WORKDIR and COPY lines are read)")
    name = package.get("name") if isinstance(package.get("name"), str) else None
    return HarborTask(
        id=(name or folder.name).replace("/", "-"),
        path=str(folder),
        instruction=instruction,
        workdir=workdir,
        seed=_seed_files(folder / "environment", workdir, copies),
        agent_timeout=_seconds(agent, "agent", config_path, 600.0),
        verifier_timeout=_seconds(verifier, "verifier", config_path, 600.0),
        verifier_env=_strings(verifier, "verifier", config_path),
        solution_env=_strings(solution, "solution", config_path),
        metadata=dict(metadata),
        ignored=tuple(ignored),
    )


def load_harbor_folder(path: str | Path) -> Any:
    """The ``harbor`` template's ``folder_loader``: an ``Environment`` with one task per task folder."""
    from rolloutgym.declarative import Environment, Task

    root = Path(path).resolve()
    folders = [root] if (root / MARKER).is_file() else sorted(p for p in root.iterdir() if (p / MARKER).is_file())
    tasks = []
    for folder in folders:
        task = read_task(folder)
        tasks.append(
            Task(
                instruction=task.instruction,
                id=task.id,
                split="test",
                hidden_ground_truth={"task_dir": task.path},
                metadata={"harbor": dict(task.metadata), "ignored": list(task.ignored)},
            )
        )
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.") or "harbor"
    return Environment(
        slug=slug,
        name=f"Harbor tasks in {root}",
        template="harbor",
        config={"root": str(root)},
        tasks=tasks,
        description=f"{len(tasks)} Harbor-format task(s) from {root}, run in the bubblewrap sandbox",
    )


def compile_harbor(environment: Any) -> Any:
    """The ``harbor`` template's compiler: ``factory(task, **kwargs) -> HarborTaskEnv``."""

    def factory(task: Any, **kwargs: Any) -> HarborTaskEnv:
        folder = task.hidden_ground_truth["task_dir"] if hasattr(task, "hidden_ground_truth") else task["task_dir"]
        return HarborTaskEnv(read_task(folder), **kwargs)

    return factory


def validate_harbor(config: Any, prefix: str) -> dict[str, Any]:
    """The ``harbor`` template's config: ``{"root": folder}`` (written by :func:`load_harbor_folder`)."""
    if not isinstance(config, dict) or not isinstance(config.get("root"), str) or set(config) - {"root"}:
        raise EnvFileError(f"{prefix}: the harbor template's config is {{'root': FOLDER}}, got {config!r:.200}")
    return config


# -- the env ------------------------------------------------------------------------------


class HarborTaskEnv(gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """A Harbor task: shell commands in a sandbox, graded by the task's ``tests/test.sh``.

    Args:
        task: the task.
        command_timeout: wall-clock seconds per ``bash`` call.
        output_chars: how much of a command's output the agent sees.
        workspace_mib: the workspace's size limit, measured after each command (a file is at
            most 64 MiB, RLIMIT_FSIZE); past it the episode ends with reward 0.
    """

    metadata = {"render_modes": []}
    tools = [BASH_TOOL, SUBMIT_TOOL]

    def __init__(
        self,
        task: HarborTask,
        *,
        command_timeout: float = 60.0,
        output_chars: int = 8000,
        workspace_mib: int = 256,
    ) -> None:
        self.task = task
        self.workspace_limit = int(workspace_mib) << 20
        self.command_timeout = float(command_timeout)
        self.output_chars = int(output_chars)
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.sandbox: EpisodeSandbox | None = None
        self._done = True
        self._commands = 0
        self._invalid = 0
        self._oracle_position = 0

    def _limits(self, seconds: float) -> SandboxLimits:
        seconds = max(1.0, seconds)
        return SandboxLimits(wall_seconds=seconds, cpu_seconds=max(1, int(seconds)) + 1, processes=256)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        super().reset(seed=seed)
        self.close()
        self.sandbox = EpisodeSandbox(workdir=self.task.workdir, hide=[self.task.path])
        self.sandbox.check()
        files = {}
        total = 0
        for path, host in self.task.seed.items():
            data = Path(host).read_bytes()
            total += len(data)
            if total > _MAX_SEED_BYTES:
                raise EnvFileError(f"{self.task.path}: the environment's files pass {_MAX_SEED_BYTES >> 20} MiB")
            files[path] = data
        self.sandbox.seed(files)
        self._done, self._commands, self._invalid, self._oracle_position = False, 0, 0, 0
        system = _SYSTEM_PROMPT.format(workdir=self.task.workdir)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": self.task.instruction}]
        return messages, {"task_id": self.task.id}

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done or self.sandbox is None:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        if isinstance(action, str):
            action = {"role": "assistant", "content": action}
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        if not calls:
            return self._finish([])
        observations: list[dict[str, Any]] = []
        for call in calls if isinstance(calls, list) else [calls]:
            call_id = str(call.get("id", "call")) if isinstance(call, dict) else "call"
            name = call.get("name") if isinstance(call, dict) else None
            arguments = call.get("arguments") if isinstance(call, dict) else None
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    pass
            if name == "submit":
                observations.append({"role": "tool", "tool_call_id": call_id, "content": "submitted for grading"})
                return self._finish(observations)
            observations.append({"role": "tool", "tool_call_id": call_id, "content": self._bash(name, arguments)})
            used = self.sandbox.workspace_bytes()
            if used > self.workspace_limit:
                return self._over_limit(observations, used)
        return observations, 0.0, False, False, {"commands": self._commands, "invalid_actions": self._invalid}

    def _bash(self, name: Any, arguments: Any) -> str:
        assert self.sandbox is not None
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if name != "bash" or not isinstance(command, str):
            self._invalid += 1
            if name != "bash":
                return f"error: unknown tool {name!r}; the tools are: bash, submit"
            return "error: bash takes {'command': 'a shell command'}"
        try:
            command.encode("utf-8")
        except UnicodeEncodeError:
            self._invalid += 1
            return "error: the command is not valid UTF-8 text (it holds a lone surrogate)"
        if "\x00" in command:
            self._invalid += 1
            return "error: the command holds a NUL byte"
        self._commands += 1
        result = self.sandbox.shell(command, limits=self._limits(self.command_timeout))
        output = result.output
        if len(output) > self.output_chars:
            half = self.output_chars // 2
            output = output[:half] + "\n[... output truncated ...]\n" + output[-half:]
        status = "exit status 0" if result.status == "ok" else result.describe()
        return f"{output.rstrip()}\n[{status}]".lstrip()

    def _over_limit(
        self, observations: list[dict[str, Any]], used: int
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        """The workspace grew past its limit: the episode ends with 0, its files are deleted."""
        self._done = True
        limit_mib = self.workspace_limit >> 20
        score = Score(0.0, {}, {"workspace_bytes": used}, feedback=f"the workspace grew past {limit_mib} MiB")
        self.close()
        info = {"score": score.to_dict(), "commands": self._commands, "invalid_actions": self._invalid}
        return observations, 0.0, True, False, info

    def _finish(
        self, observations: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        self._done = True
        score = self._verify()
        info = {"score": score.to_dict(), "commands": self._commands, "invalid_actions": self._invalid}
        return observations, score.value, True, False, info

    def _verify(self) -> Score:
        """Run ``tests/test.sh`` in a fresh sandbox (the trusted side) and read the reward it wrote."""
        assert self.sandbox is not None
        script = f"cd {shlex.quote(self.task.workdir)} && exec /bin/bash /tests/test.sh"
        environment = {**self.task.verifier_env}
        result, logs = self.sandbox.verify(
            Path(self.task.path) / "tests",
            script,
            limits=self._limits(self.task.verifier_timeout),
            environment=environment,
        )
        tail = result.output[-2000:]
        metadata = {"verifier": result.describe(), "verifier_output_tail": tail, "ignored": list(self.task.ignored)}
        value, components, problem = _read_reward(logs)
        if problem:
            return Score(0.0, {}, metadata, feedback=f"{problem}; the tests {result.describe()}: {tail[-400:]}")
        return Score(value, components, metadata, feedback=f"the task's tests gave reward {value}")

    # -- reference solutions ------------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """``bash`` with the task's ``solution/solve.sh``, then ``submit`` (read on the trusted side)."""
        position = self._oracle_position
        self._oracle_position += 1
        solve = Path(self.task.path) / "solution" / "solve.sh"
        if position == 0 and solve.is_file():
            exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.task.solution_env.items())
            script = exports + solve.read_text(encoding="utf-8", errors="replace")
            call = {"id": "call_0", "name": "bash", "arguments": {"command": script}}
        else:
            call = {"id": f"call_{position}", "name": "submit", "arguments": {}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}

    def null_action(self) -> dict[str, Any]:
        """Do nothing: the tests check the starting workspace."""
        return {"role": "assistant", "content": ""}

    def close(self) -> None:
        """Delete the episode's workspace (idempotent)."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        self._done = True


def _read_reward(logs: str) -> tuple[float, dict[str, float], str | None]:
    """``(reward, components, problem)`` from ``reward.txt`` or ``reward.json`` in ``logs``
    (regular files only, never through a symlink)."""
    text = read_regular_file(logs, "reward.txt")
    if text is not None:
        try:
            value = float(text.decode("utf-8").strip())
        except (UnicodeDecodeError, ValueError):
            return 0.0, {}, f"reward.txt holds {text[:80]!r}, not a number"
        if not math.isfinite(value):
            return 0.0, {}, f"reward.txt holds {value}, not a finite number"
        return value, {}, None
    data = read_regular_file(logs, "reward.json")
    if data is None:
        return 0.0, {}, "the tests wrote no /logs/verifier/reward.txt or reward.json"
    try:
        rewards = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return 0.0, {}, "reward.json is not valid JSON"
    if (
        not isinstance(rewards, dict)
        or not rewards
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in rewards.values()
        )
    ):
        return 0.0, {}, "reward.json must be a flat object of finite numbers"
    components = {str(key): float(value) for key, value in rewards.items()}
    value = components.get("reward", sum(components.values()) / len(components))
    return value, components, None
