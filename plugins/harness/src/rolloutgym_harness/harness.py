"""Harness policies: run an agent program you do not own against the interception endpoint.

``--policy harness:command --policy-arg command='my-agent --task {instruction_file}'
--policy-arg model=hf:tiny``: each env turn starts the endpoint, runs the command (a shell
command template) with ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``/... pointed at it, waits for
it (wall limit, call limit) and sends what it printed on stdout to the env as the answer.
Every model call the harness made is in the step's ``policy_info["harness"]["calls"]`` (token
ids, logprobs, stop reason, sampling parameters); :func:`harness_trajectory` turns a step back
into a token-exact :class:`~rolloutgym_protocol.Trajectory` (one step per model call).

On an env with tools that takes message actions (``mcp="auto"``), the harness also gets the
env's tools as an MCP server (streamable HTTP, ``ROLLOUTGYM_MCP_URL`` / ``{mcp_url}``, served by
:func:`rolloutgym.serve.mcp_bridge.session_mcp_server` on the endpoint's server): the harness
then lives across env steps; each MCP tool call it makes is one env step the engine records
(the env's answer goes back over MCP), and its printed answer is the last step.

Template fields: ``{instruction}`` (shell-quoted), ``{instruction_file}``, ``{workdir}``,
``{base_url}``, ``{openai_base_url}``, ``{model}``, ``{mcp_url}`` (empty without MCP).

This module holds the policy's options and the ``harness`` provider; an episode (the harness
process it runs, its limits, the MCP bridge) is ``_episode.py``.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rolloutgym_protocol import Step, Trajectory
from rolloutgym_protocol.errors import ConfigError

from ._episode import _HarnessEpisode
from .recording import CallRecord, EndpointSession

__all__ = ["CommandHarness", "harness_trajectory", "make_policy"]

_FIELDS = (
    "instruction",
    "instruction_file",
    "workdir",
    "base_url",
    "openai_base_url",
    "model",
    "mcp_url",
    "mcp_args",
    "scratch",
)


class CommandHarness:
    """A policy that runs a CLI agent per env turn, its model calls served by the endpoint.

    Args:
        command: a shell command template (see the module docstring for its fields).
        model: the policy that answers the harness's model calls (``"hf:tiny"``, an
            ``openai:MODEL`` reference, forwarded to that server, or a policy object).
        model_args: options for the model's factory when ``model`` is a reference
            (``{"threads": 1}``, ``{"api_key": "...", "return_token_ids": True}``).
        base_url: the ``openai:`` server (``--base-url``); same as ``model_args={"base_url": ...}``.
        wall_limit: seconds the harness may run per turn; then it is killed and the
            episode's stop reason is ``"wall_limit"``.
        max_calls: the most model calls per episode (``"max_calls"``).
        max_completion_tokens: the most tokens the model samples per episode (``"token_limit"``).
        force: sampling parameters the trainer forces on every call.
        workdir: where the harness runs (default: the env's ``workspace`` folder when it
            has one on disk, else a fresh temporary folder per episode).
        env: extra environment variables for the harness.
        mcp: serve the env's tools to the harness over MCP (``"auto"``: when the env has
            tools and takes message actions). The harness gets the server's URL as
            ``ROLLOUTGYM_MCP_URL`` and ``{mcp_url}``; each tool call it makes there is one
            env step of the episode, its printed answer the last.
        sandbox: ``"bwrap"`` runs the harness in bubblewrap (:mod:`rolloutgym_harness._sandbox`:
            no network but the endpoint at the same 127.0.0.1 address, the work folder the only
            writable host folder, an allow-listed filesystem: the system, the interpreter's
            standard library and ``sandbox_packages``); ``"none"`` (default) runs it on the host,
            unsandboxed.
        sandbox_packages: the Python distributions the sandboxed harness may import (with what
            they require; default: those of openai, anthropic, mcp that are installed). Never a
            ``rolloutgym*`` package: env plugins, their data and graders stay outside.
        sandbox_files, sandbox_folders: more host paths the sandboxed harness reads (read-only).
    """

    def __init__(
        self,
        command: str,
        *,
        model: Any = "hf:tiny",
        model_args: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        wall_limit: float = 600.0,
        max_calls: int | None = None,
        max_completion_tokens: int | None = None,
        force: Mapping[str, Any] | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        mcp: bool | str = "auto",
        sandbox: str = "none",
        sandbox_packages: Sequence[str] | str | None = None,
        sandbox_files: Sequence[str] = (),
        sandbox_folders: Sequence[str] = (),
        mcp_args: str = "",
        python_path: Sequence[str] = (),
        container: bool | str = False,
        agent_folder: str | None = None,
        agent_installer: str = "",
        container_command: str | None = None,
    ) -> None:
        if not command or not isinstance(command, str):
            raise ConfigError("harness:command needs a command template: --policy-arg command='agent {instruction}'")
        try:
            command.format(**{key: "" for key in _FIELDS})
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"harness command template {command!r}: bad field {exc}; fields: {', '.join(_FIELDS)} "
                "(write {{ and }} for literal braces)"
            ) from exc
        if float(wall_limit) <= 0:
            raise ConfigError(f"wall_limit must be positive, got {wall_limit}")
        if model_args is not None and not isinstance(model_args, Mapping):
            raise ConfigError(
                f"model_args must be a mapping (--policy-arg 'model_args={{\"threads\": 1}}'), got {model_args!r}"
            )
        options = dict(model_args or {})
        if base_url is not None:
            options["base_url"] = base_url
        if isinstance(model, str):
            from rolloutgym import make_policy

            self.model_name = model
            model = make_policy(model, **options)
        elif options:
            raise ConfigError("model_args and base_url apply to a model reference (model='openai:NAME'), not an object")
        else:
            self.model_name = getattr(model, "name", None) or type(model).__name__
        self.model = model
        self.command = command
        self.wall_limit = float(wall_limit)
        self.max_calls = None if max_calls is None else int(max_calls)
        self.max_completion_tokens = None if max_completion_tokens is None else int(max_completion_tokens)
        self.force = dict(force or {})
        self.workdir = workdir
        self.origin = os.getcwd()  # relative script paths in the command resolve against the caller's folder
        self.extra_env = dict(env or {})
        if isinstance(mcp, str) and mcp.lower() in ("true", "false", "auto"):
            mcp = {"true": True, "false": False, "auto": "auto"}[mcp.lower()]
        if mcp not in (True, False, "auto"):
            raise ConfigError(f"mcp must be true, false or auto (--policy-arg mcp=auto), got {mcp!r}")
        self.mcp = mcp
        self.sandbox_packages = _sandbox_packages(sandbox, sandbox_packages)
        self.sandbox_files = tuple(sandbox_files)
        self.sandbox_folders = tuple(sandbox_folders)
        self.sandbox = sandbox
        self.mcp_args = mcp_args  # {mcp_args} in the command: this, formatted, when the env's tools are served
        self.python_path = tuple(python_path)
        self.container = _container_mode(container)
        self.agent_folder = agent_folder  # a preset's install folder, layered on the task's image in a container
        self.agent_installer = agent_installer
        self.container_command = container_command  # the command there ({bin} under /opt/rolloutgym-agent)
        self.name = name or f"harness:command({self.model_name})"

    def for_env(self, environment: Any) -> _HarnessEpisode:
        return _HarnessEpisode(self, environment)

    def __call__(self, observation: Any) -> Any:
        return self.for_env(None)(observation)


def _container_mode(value: bool | str) -> bool | str:
    if isinstance(value, str) and value.lower() in ("true", "false", "auto"):
        value = {"true": True, "false": False, "auto": "auto"}[value.lower()]
    if value not in (True, False, "auto"):
        raise ConfigError(f"container must be true, false or auto (--policy-arg container=auto), got {value!r}")
    return value


def _sandbox_packages(sandbox: str, packages: Sequence[str] | str | None) -> tuple[str, ...]:
    """The distributions the sandboxed harness imports (checked now when sandboxed: a bad list is
    an error here, not at the first episode)."""
    from ._sandbox import DEFAULT_PACKAGES, bwrap_path, installed_packages, package_binds

    if sandbox not in ("none", "bwrap"):
        raise ConfigError(f"sandbox must be none or bwrap (--policy-arg sandbox=bwrap), got {sandbox!r}")
    if isinstance(packages, str):
        packages = [name.strip() for name in packages.split(",") if name.strip()]
    chosen = installed_packages(DEFAULT_PACKAGES) if packages is None else tuple(packages)
    if sandbox == "bwrap":
        bwrap_path()
        package_binds(chosen)
    return chosen


def harness_trajectory(item: Step | Trajectory, *, reward: float | None = None) -> Trajectory:
    """The model calls recorded in a harness step (or in all the harness steps of an episode, as
    with MCP, where each tool call is a step), as a token-exact trajectory (one step per call;
    works on steps read back from a run file). ``reward`` defaults to the step's (the episode's return)."""
    steps = list(item.steps) if isinstance(item, Trajectory) else [item]
    records = [step.policy_info.get("harness") for step in steps]
    records = [record for record in records if isinstance(record, Mapping)]
    if not records:
        raise ConfigError("this step has no policy_info['harness']: it was not made by a harness policy")
    session = EndpointSession("replay")
    session.calls = [CallRecord(**call) for record in records for call in record.get("calls", [])]
    session.segments = int(records[-1].get("segments", 0))
    session.stop_reason = str(records[-1].get("stop_reason"))
    if reward is None:
        reward = sum(step.reward for step in steps)
    return session.trajectory(reward=reward)


_ALLOWED = {
    "command",
    "model",
    "model_args",
    "base_url",
    "wall_limit",
    "max_calls",
    "max_completion_tokens",
    "force",
    "workdir",
    "env",
    "name",
    "mcp",
    "sandbox",
    "sandbox_packages",
    "container",
}
_MINI_ALLOWED = (_ALLOWED - {"command"}) | {"step_limit"}


def _preset_policy(kind: str, options: dict[str, Any]) -> CommandHarness:
    """``harness:claude-code``, ``harness:codex``, ...: the preset installed, then run as a command."""
    from ._sandbox import bwrap_available
    from .presets import PRESETS, install

    preset = PRESETS[kind]
    unknown = sorted(set(options) - (_ALLOWED - {"command"}) - {"cache"})
    if unknown:
        raise ConfigError(f"harness:{kind}: unknown option(s) {', '.join(unknown)}")
    if preset.dialect == "gemini":
        raise ConfigError(
            f"harness:{kind} speaks the Gemini API (generateContent), which the endpoint does not serve yet; "
            "use harness:claude-code, harness:codex or harness:command"
        )
    folder = install(preset, options.pop("cache", None))
    program = shlex.quote(str(folder / preset.program))
    command = preset.command.replace("{bin}", program)
    python_path: tuple[str, ...] = ()
    if preset.installer == "pip":
        python_path = tuple(str(path) for path in folder.glob("lib/python3*/site-packages"))
    env = {**preset.environment, **dict(options.pop("env", None) or {})}
    if python_path:
        env.setdefault("PYTHONPATH", ":".join(python_path))
    defaults: dict[str, Any] = {
        "name": f"harness:{kind}",
        "sandbox": "bwrap" if bwrap_available() else "none",
        "sandbox_packages": (),
        "container": "auto",  # inside the env's container when it has one (a Harbor task on --sandbox docker)
    }
    settings = {**defaults, **options}
    from ._container import AGENT_ROOT

    inside = preset.command.replace("{bin}", shlex.quote(f"{AGENT_ROOT}/{preset.program}"))
    layer = {"agent_folder": str(folder), "agent_installer": preset.installer, "container_command": inside}
    return CommandHarness(
        command,
        env=env,
        mcp_args=preset.mcp_args,
        sandbox_folders=(str(folder),),
        python_path=python_path,
        **layer,
        **settings,
    )


def make_policy(kind: str | None = None, **options: Any) -> CommandHarness:
    """The ``harness`` provider: ``harness:command`` (``command=`` a template, ``model=`` a policy)
    and ``harness:mini-swe-agent`` (``step_limit=``, ``model=``; needs ``pip install mini-swe-agent``)."""
    if kind == "mini-swe-agent":
        unknown = sorted(set(options) - _MINI_ALLOWED)
        if unknown:
            known = ", ".join(sorted(_MINI_ALLOWED))
            raise ConfigError(f"harness:mini-swe-agent: unknown option(s) {', '.join(unknown)}; known: {known}")
        step_limit = int(options.pop("step_limit", 20))
        script = str(Path(__file__).with_name("mini_swe.py"))  # run by path: needs no rolloutgym package
        command = f"{shlex.quote(sys.executable)} {shlex.quote(script)} {{instruction_file}} --step-limit {step_limit}"
        defaults = {"name": "harness:mini-swe-agent", "sandbox_packages": ("mini-swe-agent", "pyyaml")}
        return CommandHarness(command, **{**defaults, **options, "sandbox_files": (script,)})
    from .presets import PRESETS

    if kind in PRESETS:
        return _preset_policy(kind, options)
    if kind != "command":
        known = ", ".join(f"harness:{name}" for name in ("command", "mini-swe-agent", *PRESETS))
        raise ConfigError(f"unknown harness {kind!r}; known: {known}")
    unknown = sorted(set(options) - _ALLOWED)
    if unknown:
        raise ConfigError(
            f"harness policy: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_ALLOWED))}"
        )
    if "command" not in options:
        raise ConfigError("harness:command needs --policy-arg command='agent {instruction}'")
    return CommandHarness(**options)
