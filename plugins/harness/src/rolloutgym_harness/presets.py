"""Harness presets: the agent CLIs people run, as data.

A :class:`Preset` says how to install an agent (npm or pip, a pinned version, into a cache
folder), which environment switches its telemetry, update checks and login off (each one its
documented setting), its command line (a ``harness:command`` template; ``{bin}`` is the
installed program, ``{mcp_args}`` its flags for the env's MCP server, empty without one) and
which wire dialect it speaks to the interception endpoint. ``--policy harness:claude-code``
installs it on first use (``~/.cache/rolloutgym/harness`` or ``$ROLLOUTGYM_HARNESS_CACHE``) and
runs it like any ``harness:command``, in bubblewrap by default with its install folder
read-only, its model calls answered and recorded by the endpoint.

Adding a preset is one entry in :data:`PRESETS`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rolloutgym_protocol.errors import ConfigError

__all__ = ["PRESETS", "Preset", "install"]


@dataclass(frozen=True)
class Preset:
    name: str
    installer: str  # "npm" or "pip" (into the cache folder) or "env" (the Python environment's own)
    package: str
    version: str
    program: str  # the installed program, relative to the install folder
    command: str  # a harness:command template with {bin} and {mcp_args}
    dialect: str  # "anthropic" (Messages), "responses", "chat", "gemini" (not served)
    environment: Mapping[str, str] = field(default_factory=dict)
    mcp_args: str = ""  # formatted with {mcp_url}; only when the env's tools are served
    packages: tuple[str, ...] = ()  # Python distributions the sandboxed agent imports (installer "env")


_CLAUDE_MCP = '--mcp-config \'{{"mcpServers": {{"env": {{"type": "http", "url": "{mcp_url}"}}}}}}\' --strict-mcp-config'
_CODEX_PROVIDER = (
    '-c \'model_providers.rolloutgym={{ name="rolloutgym", base_url="{openai_base_url}", wire_api="responses", '
    'env_key="OPENAI_API_KEY" }}\''
)

_OPENCODE_PROVIDER = (
    '{{"provider": {{"rolloutgym": {{"npm": "@ai-sdk/openai-compatible", "name": "rolloutgym", '
    '"options": {{"baseURL": "{openai_base_url}", "apiKey": "rolloutgym"}}, '
    '"models": {{"rolloutgym": {{"name": "rolloutgym", "tool_call": true, '
    '"limit": {{"context": 131072, "output": 8192}}}}}}}}}}, "autoupdate": false, "share": "disabled"}}'
)
# the env's MCP server, in the run's own global config file (OpenCode has no command-line flag for it)
_OPENCODE_MCP = (
    "mkdir -p {scratch}/.config/opencode && printf '%s' "
    '\'{{"mcp": {{"env": {{"type": "remote", "url": "{mcp_url}", "enabled": true}}}}}}\' '
    "> {scratch}/.config/opencode/opencode.json && "
)

PRESETS: dict[str, Preset] = {
    "claude-code": Preset(
        name="claude-code",
        installer="npm",
        package="@anthropic-ai/claude-code",
        version="2.1.337",
        program="node_modules/.bin/claude",
        command=(
            '{bin} -p "$(cat {instruction_file})" --output-format text --dangerously-skip-permissions '
            "--model rolloutgym {mcp_args}"
        ),
        dialect="anthropic",
        environment={
            # https://docs.anthropic.com/en/docs/claude-code/settings (environment variables)
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ENABLE_TOOL_SEARCH": "false",  # the env's MCP tools are offered as tools, not behind a search
            "CLAUDE_CONFIG_DIR": "{scratch}/.claude",  # never the user's own config or login
            "IS_SANDBOX": "1",  # allows --dangerously-skip-permissions as root (the sandbox is rolloutgym's)
        },
        mcp_args=_CLAUDE_MCP,
    ),
    "codex": Preset(
        name="codex",
        installer="npm",
        package="@openai/codex",
        version="0.171.0",
        program="node_modules/.bin/codex",
        command=(
            "mkdir -p {scratch}/.codex && "
            "{bin} exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -m rolloutgym "
            f"-c model_provider=rolloutgym {_CODEX_PROVIDER} -c check_for_update_on_startup=false "
            '-c analytics.enabled=false {mcp_args} "$(cat {instruction_file})"'
        ),
        dialect="responses",
        environment={"CODEX_HOME": "{scratch}/.codex"},  # never the user's own config or login
        mcp_args="-c 'mcp_servers.env={{ url=\"{mcp_url}\" }}'",
    ),
    "opencode": Preset(
        name="opencode",
        installer="npm",
        package="opencode-ai",
        version="1.18.33",
        program="node_modules/.bin/opencode",
        command='{mcp_args}{bin} run --model rolloutgym/rolloutgym "$(cat {instruction_file})"',
        dialect="chat",
        environment={
            # https://opencode.ai/docs/config/ and /docs/providers/ (a custom OpenAI-compatible provider)
            "OPENCODE_CONFIG_CONTENT": _OPENCODE_PROVIDER,
            "OPENCODE_DISABLE_AUTOUPDATE": "true",
            "OPENCODE_DISABLE_SHARE": "true",
            "OPENCODE_DISABLE_MODELS_FETCH": "true",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true",
            "OPENCODE_DISABLE_CLAUDE_CODE": "true",
            "OPENCODE_DISABLE_EXTERNAL_SKILLS": "true",
            "OPENCODE_DISABLE_PROJECT_CONFIG": "true",
            "XDG_CONFIG_HOME": "{scratch}/.config",  # never the user's own config or login
            "XDG_DATA_HOME": "{scratch}/.local/share",
            "XDG_CACHE_HOME": "{scratch}/.cache",
            "XDG_STATE_HOME": "{scratch}/.local/state",
        },
        mcp_args=_OPENCODE_MCP,
    ),
    "gemini-cli": Preset(
        name="gemini-cli",
        installer="npm",
        package="@google/gemini-cli",
        version="0.61.0",
        program="node_modules/.bin/gemini",
        command='{bin} --yolo -p "$(cat {instruction_file})"',
        dialect="gemini",
        environment={"GEMINI_CLI_TELEMETRY": "false"},
    ),
    "aider": Preset(
        name="aider",
        installer="pip",
        package="aider-chat",
        version="0.86.1",
        program="bin/aider",
        command=(
            # aider fetches litellm's model list from GitHub at start unless its cache file is fresh and not empty
            'mkdir -p "$HOME/.aider/caches" && '
            """printf '{{"rolloutgym": {{}}}}' > "$HOME/.aider/caches/model_prices_and_context_window.json" """
            "&& {bin} --message-file {instruction_file} --yes-always --no-git --no-analytics --no-check-update "
            "--no-show-model-warnings --no-pretty --model openai/rolloutgym --openai-api-base {openai_base_url}"
        ),
        dialect="chat",
        environment={
            # litellm's documented switch: its bundled model cost map, not a fetch from GitHub at start
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
    ),
}


def cache_root() -> Path:
    return Path(os.environ.get("ROLLOUTGYM_HARNESS_CACHE") or Path.home() / ".cache" / "rolloutgym" / "harness")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run_installer(preset: Preset, target: Path) -> None:
    if preset.installer == "npm":
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise ConfigError(
                f"harness:{preset.name} installs from npm: it needs node and npm (apt-get install nodejs npm)"
            )
        argv = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error"]
        argv.append(f"{preset.package}@{preset.version}")
    else:
        argv = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            # Everything into the preset's own folder: without --ignore-installed, pip "upgrades" what the
            # tool pins by uninstalling it from this interpreter's environment (aider's pins removed rich and
            # pygments from the rolloutgym env itself).
            "--ignore-installed",
            "--no-warn-script-location",
            "--prefix",
            str(target),
            f"{preset.package}=={preset.version}",
        ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        errors = [line for line in said if line.startswith(("ERROR", "npm error", "npm ERR"))]  # not the warnings
        tail = "\n".join(errors or said)[-600:]
        raise ConfigError(f"harness:{preset.name}: installing {preset.package}@{preset.version} failed: {tail}")


def install(preset: Preset, cache: str | os.PathLike[str] | None = None) -> Path:
    """The install folder of ``preset`` (installed on first use; one install per version, shared)."""
    if preset.installer == "env":
        return Path(sys.prefix)
    root = Path(cache) if cache is not None else cache_root()
    folder = root / f"{preset.name}-{preset.version}"
    if (folder / ".installed").exists():
        return folder
    with _locked(root / f".{preset.name}-{preset.version}.lock"):
        if (folder / ".installed").exists():
            return folder
        staging = Path(tempfile.mkdtemp(prefix=f".{preset.name}-", dir=root))
        staging.chmod(0o755)  # the sandboxed agent (another uid) reads it
        try:
            _run_installer(preset, staging)
            if not (staging / preset.program).exists():
                raise ConfigError(f"harness:{preset.name}: the install has no {preset.program}")
            (staging / ".installed").write_text(f"{preset.package}@{preset.version}\n")
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder
