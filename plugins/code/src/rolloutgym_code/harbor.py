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
from pathlib import Path
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import Score, spaces
from rolloutgym_protocol.errors import EnvFileError

from ._agent_calls import as_message, read_call, tool_calls_of
from ._harbor_container import ContainerEpisode
from ._harbor_sandbox import EpisodeSandbox
from ._harbor_task import MARKER, MAX_SEED_BYTES, HarborTask, read_task
from ._paths import read_regular_file
from .sandbox import SandboxLimits

__all__ = ["HarborTaskEnv", "compile_harbor", "load_harbor_folder"]


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


# -- reading a task folder ----------------------------------------------------------------


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
                split=_split_of(task.metadata),
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


def _split_of(metadata: Any) -> str:
    """``[metadata] split`` when it names a split (``rolloutgym tasks make-repo --split``), else ``test``."""
    split = metadata.get("split") if isinstance(metadata, dict) else None
    return split if split in ("train", "dev", "test") else "test"


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
            most 64 MiB, RLIMIT_FSIZE); past it the episode ends with reward 0. Run as root
            (bubblewrap), the episode's folder is also a tmpfs of this size plus 16 MiB, so a
            command's writes past that fail inside it and never reach the host's disk. On a container
            provider it is the size of the working directory's tmpfs instead.
        sandbox: ``bwrap`` (default: the host's filesystem, the Dockerfile's COPY lines seed the
            workspace) or a provider of :mod:`rolloutgym.sandboxes` that builds images
            (``docker``: the task's own image, the verifier in a separate container; see
            :mod:`rolloutgym_code._harbor_container`).
        image_map: ``FROM`` rewrites for offline base images (``{"python:3.11-slim": "localhost/..."}``
            or ``"A=B,C=D"``; ``--image-map`` on the command line).
        sandbox_options: options of the provider (``{"host": "unix:///run/podman/podman.sock"}``).
    """

    metadata = {"render_modes": []}
    tools = [BASH_TOOL, SUBMIT_TOOL]
    fork_note = (
        "its shell commands change a sandbox's whole filesystem (packages, processes), which is copied only by "
        "a sandbox snapshot; not forkable yet (replay the commands on a fresh env instead)"
    )

    def __init__(
        self,
        task: HarborTask,
        *,
        command_timeout: float = 60.0,
        output_chars: int = 8000,
        workspace_mib: int = 256,
        sandbox: str = "bwrap",
        image_map: Any = None,
        sandbox_options: dict[str, Any] | None = None,
    ) -> None:
        from rolloutgym.sandboxes._build import parse_image_map

        self.task = task
        self.sandbox_name = str(sandbox or "bwrap")
        self.image_map = parse_image_map(image_map)
        self.sandbox_options = dict(sandbox_options or {})
        self.workspace_limit = int(workspace_mib) << 20
        self.command_timeout = float(command_timeout)
        self.output_chars = int(output_chars)
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.sandbox: EpisodeSandbox | ContainerEpisode | None = None
        # set by a harness policy that runs its agent program inside the agent's container (rolloutgym_harness)
        self.harness_layer: Any = None
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
        if self.sandbox_name == "bwrap":
            self.sandbox = EpisodeSandbox(
                workdir=self.task.workdir, hide=[self.task.path], workspace_bytes=self.workspace_limit
            )
        else:
            self.sandbox = ContainerEpisode(
                self.task,
                provider=self.sandbox_name,
                provider_options=self.sandbox_options,
                image_map=self.image_map,
                workspace_bytes=self.workspace_limit,
                layer=self.harness_layer,
            )
        self.sandbox.check()
        files = {}
        total = 0
        for path, host in self.task.seed.items():
            data = Path(host).read_bytes()
            total += len(data)
            if total > MAX_SEED_BYTES:
                raise EnvFileError(f"{self.task.path}: the environment's files pass {MAX_SEED_BYTES >> 20} MiB")
            files[path] = data
        self.sandbox.seed(files)
        self._done, self._commands, self._invalid, self._oracle_position = False, 0, 0, 0
        system = _SYSTEM_PROMPT.format(workdir=self.task.workdir)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": self.task.instruction}]
        return messages, {"task_id": self.task.id}

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done or self.sandbox is None:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        calls = tool_calls_of(as_message(action))
        if calls is None:
            return self._finish([])
        observations: list[dict[str, Any]] = []
        for call in calls:
            call_id, name, arguments = read_call(call)
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
        metadata = {"verifier": result.describe(), "verifier_output_tail": tail, "ignored": self._ignored()}
        if isinstance(self.sandbox, ContainerEpisode):
            metadata["sandbox"] = {"provider": self.sandbox_name, "stages": self.sandbox.stages}
        value, components, problem = _read_reward(logs)
        if problem:
            return Score(0.0, {}, metadata, feedback=f"{problem}; the tests {result.describe()}: {tail[-400:]}")
        return Score(value, components, metadata, feedback=f"the task's tests gave reward {value}")

    def _ignored(self) -> list[str]:
        """The task.toml settings this run does not honour (a container provider honours the image and limits)."""
        if self.sandbox_name == "bwrap":
            return list(self.task.ignored)
        honoured = ("[environment] cpus", "[environment] memory_mb", "[environment] storage_mb", "[environment] docker")
        honoured += ("[environment] allow_internet", "environment/Dockerfile", "tests/Dockerfile")
        return [item for item in self.task.ignored if not item.startswith(honoured)]

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
