"""Harness presets run the real agent CLIs (Claude Code, Codex, OpenCode, from npm at their pinned versions,
installed once per test session into a cache folder) against the interception endpoint, in
bubblewrap, on ``code/pybugs-v0`` through the env's tools over MCP, to a scored end.

The model is a scripted token policy that writes valid tool calls (``<tool_call>`` blocks the
endpoint turns into each CLI's dialect: Anthropic ``tool_use`` for Claude Code, Responses
``function_call`` in the ``mcp__env`` namespace for Codex, Chat Completions ``tool_calls`` named
``env_*`` for OpenCode, whose title call is answered with text); every call is recorded with its token
ids. The install needs the npm registry: without it (``npm ping`` fails) these tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import rolloutgym_code
from rolloutgym import arollout, get_registry
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym_harness.harness import make_policy
from rolloutgym_harness.presets import PRESETS, cache_root
from rolloutgym_protocol.errors import ConfigError

RENDERER = CharRenderer()
TASK = Path(rolloutgym_code.__file__).parent / "data" / "pybugs-v0" / "02-paginate-first-page"


def test_presets_are_pinned_data() -> None:
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.version[0].isdigit() and not set(preset.version) & set("<>=^~*")
        assert "{bin}" in preset.command and preset.dialect in ("anthropic", "responses", "chat", "gemini")


def test_gemini_cli_is_refused_clearly() -> None:
    with pytest.raises(ConfigError, match="Gemini API"):
        make_policy("gemini-cli")


def test_unknown_preset_option_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        make_policy("codex", command="x")


@pytest.fixture(scope="session")
def cache() -> Path:
    """The presets' own install cache (``$ROLLOUTGYM_HARNESS_CACHE`` or ``~/.cache/rolloutgym/harness``):
    one install per pinned version, kept across sessions like any download cache."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm (apt-get install nodejs npm)")
    root = cache_root()
    installed = all(
        (root / f"{name}-{PRESETS[name].version}" / ".installed").exists()
        for name in ("claude-code", "codex", "opencode")
    )
    if not installed:
        ping = subprocess.run(["npm", "ping"], capture_output=True, timeout=60, check=False)
        if ping.returncode != 0:
            pytest.skip("the npm registry is not reachable (the presets install from it)")
    return root


def _scripted(prefix: str, fix: str) -> TokenPolicy:
    main: list[int] = []

    def reply(prompt: list[int], index: int) -> str:
        if f"{prefix}write_file" not in RENDERER.decode(prompt):
            return "Fix the pagination bug"  # a side call without the env's tools (OpenCode's title)
        main.append(index)
        if len(main) == 1:
            call = {"name": f"{prefix}write_file", "arguments": {"path": "pagination.py", "content": fix}}
        else:
            call = {"name": f"{prefix}submit", "arguments": {}}
        return f"<tool_call>{json.dumps(call)}</tool_call>"

    sampler = ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END)
    return TokenPolicy(sampler, RENDERER, max_tokens=8000, name="scripted")


MCP_PREFIX = {"claude-code": "mcp__env__", "codex": "mcp__env__", "opencode": "env_"}


def _episode(preset: str, cache: Path, fix: str):
    policy = make_policy(preset, model=_scripted(MCP_PREFIX[preset], fix), cache=str(cache), wall_limit=180)
    assert policy.sandbox == ("bwrap" if shutil.which("bwrap") else "none")
    return asyncio.run(arollout(get_registry().make("code/pybugs-v0", task=1), policy))


@pytest.mark.parametrize(
    ("preset", "api"), [("claude-code", "messages"), ("codex", "responses"), ("opencode", "chat.completions")]
)
def test_preset_drives_a_code_task_to_a_scored_end(preset: str, api: str, cache: Path) -> None:
    fix = (TASK / "fix" / "pagination.py").read_text()
    trajectory = _episode(preset, cache, fix)
    assert sum(step.reward for step in trajectory.steps) == 1.0
    names = [step.action["tool_calls"][0]["name"] for step in trajectory.steps]
    assert names == ["write_file", "submit"]
    calls = [call for step in trajectory.steps for call in step.policy_info["harness"]["calls"]]
    assert len(calls) >= 2 and {call["api"] for call in calls} == {api}
    with_tools = [call for call in calls if call["tools"]]  # OpenCode's title call has none
    assert len(with_tools) >= 2
    for call in calls:
        assert call["prompt_token_ids"] and call["completion_token_ids"] and call["problems"] == []
    for call in with_tools:
        assert f"{MCP_PREFIX[preset]}write_file" in [tool["function"]["name"] for tool in call["tools"]]


def test_preset_wrong_fix_scores_zero(cache: Path) -> None:
    buggy = (TASK / "repo" / "pagination.py").read_text()
    trajectory = _episode("claude-code", cache, buggy)
    assert sum(step.reward for step in trajectory.steps) == 0.0


GREETING_TEST = """#!/bin/bash
if [ "$(cat /srv/work/greeting.txt 2>/dev/null)" = "$EXPECTED" ]; then
  printf '{"reward": 1.0}' > /logs/verifier/reward.json
else
  printf '{"reward": 0.0}' > /logs/verifier/reward.json
fi
"""


def _harbor_task(root: Path) -> Path:
    folder = root / "greeting"
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text('Write "hello harbor" into greeting.txt, then submit.\n')
    (folder / "task.toml").write_text(
        '[environment]\nworkdir = "/srv/work"\n[verifier]\ntimeout_sec = 30\n'
        '[verifier.env]\nEXPECTED = "hello harbor"\n'
    )
    (folder / "tests" / "test.sh").write_text(GREETING_TEST)
    return folder


@pytest.mark.parametrize("preset", ["claude-code", "codex"])
@pytest.mark.parametrize(("written", "reward"), [("hello harbor", 1.0), ("goodbye", 0.0)])
def test_preset_drives_a_harbor_task_to_a_scored_end(
    preset: str, written: str, reward: float, cache: Path, tmp_path: Path
) -> None:
    """A Harbor-format task (its bash and submit tools over MCP; each bash call runs in the task's
    own bubblewrap sandbox): the CLI's calls reach the task's tests, which score the folder."""
    from rolloutgym.sources import resolve_env

    def reply(prompt: object, index: int) -> str:
        call = (
            {"name": "mcp__env__bash", "arguments": {"command": f"printf '{written}' > greeting.txt"}}
            if index == 0
            else {"name": "mcp__env__submit", "arguments": {}}
        )
        return f"<tool_call>{json.dumps(call)}</tool_call>"

    model = TokenPolicy(ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END), RENDERER)
    policy = make_policy(preset, model=model, cache=str(cache), wall_limit=180)
    env = resolve_env(str(_harbor_task(tmp_path))).make_task(0)
    try:
        trajectory = asyncio.run(arollout(env, policy))
    finally:
        env.close()
    assert [step.action["tool_calls"][0]["name"] for step in trajectory.steps] == ["bash", "submit"]
    assert sum(step.reward for step in trajectory.steps) == reward
