"""Small real run files for the report tests: toy envs, a run with failed members, a token-level run.

Loaded by file path (``load_support()``) from test_report_build.py and tests/e2e/test_report_browser.py;
it holds no tests itself.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import zlib
from pathlib import Path
from typing import Any

from rolloutgym.builtin.toy import ArithmeticEnv, GuessNumberEnv, arith_tasks, guess_tasks
from rolloutgym.llm import CharRenderer, Sample, SamplingParams, ScriptedSampler, TokenPolicy
from rolloutgym.rollouts import arollout_group
from rolloutgym.runner import RunConfig, run
from rolloutgym.runs import FORMAT_VERSION, RunWriter

__all__ = ["blob_groups", "error_run", "hand_header", "report_data", "token_run", "toy_run"]

RENDERER = CharRenderer()


def toy_run(
    path: Path, env: str, policy: str, *, n: int = 3, limit: int = 4, seed: int = 1, tasks: list[str] | None = None
) -> Path:
    """A run of a registered env through the real runner (what 'rolloutgym run' does)."""
    run(
        RunConfig(
            env=env, policy=policy, num_rollouts=n, limit=None if tasks else limit, tasks=tasks, seed=seed, out=path
        )
    )
    return path


def hand_header(env_id: str, policy: str, task_ids: list[str], num_rollouts: int) -> dict[str, Any]:
    return {
        "kind": "header",
        "format_version": FORMAT_VERSION,
        "run_id": "test0000",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": env_id, "version": 0},
        "policy": policy,
        "num_rollouts": num_rollouts,
        "seed": None,
        "tasks": task_ids,
        "task_indices": list(range(len(task_ids))),
    }


class FlakyPolicy:
    """Answers '0' (wrong), but every other call fails like a model server that went away."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, observation: Any) -> str:
        self.calls += 1
        if self.calls % 2 == 0:
            raise ConnectionError(f"model server went away (call {self.calls})")
        return "0"


def error_run(path: Path, *, num_tasks: int = 3, n: int = 4) -> Path:
    """A toy/arith-v0 run where half of the members failed (recorded RolloutErrors)."""
    tasks = arith_tasks()[:num_tasks]
    policy = FlakyPolicy()
    with RunWriter(path, hand_header("toy/arith-v0", "flaky", [task.id for task in tasks], n)) as writer:
        for index, task in enumerate(tasks):
            group = asyncio.run(arollout_group(task, ArithmeticEnv, policy, num_rollouts=n, item_id=task.id))
            writer.write_group(index, group)
    return path


class VaryingSampler(ScriptedSampler):
    """The scripted binary-search player, with logprobs that vary token by token."""

    async def sample(self, prompt_token_ids: Any, params: SamplingParams) -> Sample:
        sample = await super().sample(prompt_token_ids, params)
        logprobs = tuple(-((index * 7) % 11) / 3.0 for index in range(len(sample.token_ids)))
        return Sample(sample.token_ids, logprobs, sample.stop_reason, sample.prompt_token_ids)


def binary_search_reply(prompt: Any, index: int) -> str:
    text = RENDERER.decode(prompt)
    low, high = map(int, re.search(r"between (\d+) and (\d+)", text).groups())  # type: ignore[union-attr]
    guesses = [int(value) for value in re.findall(r'"number": (\d+)', text.split("assistant\n", 1)[-1])]
    hints = re.findall(r"tool\n(higher|lower)", text)
    for guess, hint in zip(guesses, hints, strict=False):
        low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)
    middle = (low + high) // 2
    return f'Trying {middle}.<tool_call>{{"name": "guess", "arguments": {{"number": {middle}}}}}</tool_call>'


def token_run(path: Path, *, num_tasks: int = 2, n: int = 2) -> Path:
    """A token-level toy/guess-v0 run: TokenPolicy with a scripted sampler records ids and logprobs."""
    tasks = guess_tasks()[:num_tasks]
    policy = TokenPolicy(
        VaryingSampler(RENDERER.encode, binary_search_reply, end_token_id=CharRenderer.END), RENDERER, max_tokens=200
    )
    with RunWriter(path, hand_header("toy/guess-v0", "scripted-tokens", [task.id for task in tasks], n)) as writer:
        for index, task in enumerate(tasks):
            group = asyncio.run(
                arollout_group(task, GuessNumberEnv, policy, num_rollouts=n, item_id=task.id, max_steps=20)
            )
            writer.write_group(index, group)
    return path


def report_data(html: str) -> dict[str, Any]:
    """The report's embedded ``#rg-data`` JSON."""
    match = re.search(r'<script type="application/json" id="rg-data">(.*?)</script>', html, re.DOTALL)
    assert match, "the report has no #rg-data element"
    return json.loads(match.group(1))


def blob_groups(html: str) -> dict[str, Any]:
    """Every embedded group blob, decoded: element id -> group dict."""
    found = re.findall(r'<script type="application/x-rolloutgym-group" id="([^"]+)">([^<]*)</script>', html)
    return {element_id: json.loads(zlib.decompress(base64.b64decode(text))) for element_id, text in found}
