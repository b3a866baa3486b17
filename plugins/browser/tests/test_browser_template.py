"""The ``browser`` template: SDK-style env files run locally, malformed ones explain themselves."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.declarative import (
    Environment,
    Task,
    browser_config,
    browser_page,
    load_env_file,
    primitive,
    verifier_config,
)
from rolloutgym.rollouts import arollout
from rolloutgym_browser.template import compile_browser
from rolloutgym_protocol.errors import EnvFileError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contact_env.py"

FORM_PAGE = browser_page(
    "/signup",
    title="Sign up",
    elements=[{"type": "form", "id": "signup", "elements": [{"type": "input", "name": "email", "label": "Email"}]}],
)


def _environment(config: dict[str, Any], truth: dict[str, Any] | None = None, **extra: Any) -> Environment:
    return Environment(
        slug="t",
        name="T",
        template="browser",
        config=config,
        tasks=[Task("Sign up.", truth or {"url": "/signup"})],
        **extra,
    )


def _episode(factory: Any, task: Any, policy: str = "oracle") -> Any:
    from rolloutgym.registry import get_registry

    async def go() -> Any:
        environment = factory(task)
        try:
            return await arollout(environment, get_registry().make_policy(policy), seed=0, max_steps=30)
        finally:
            await environment.close()

    return asyncio.run(go())


def test_example_env_file_scores_one_with_the_oracle_and_zero_with_null() -> None:
    environment = load_env_file(EXAMPLE)
    factory = compile_browser(environment)
    for task in environment.tasks:
        assert _episode(factory, task).score.value == 1.0
        assert _episode(factory, task, "null").score.value == 0.0


def test_submissions_are_recorded_with_typed_fields() -> None:
    environment = load_env_file(EXAMPLE)
    trajectory = _episode(compile_browser(environment), environment.tasks[1])
    assert trajectory.steps[-1].info["state"]["submissions"] == [
        {
            "form": "contact",
            "page": "/contact",
            "fields": {"email": "jo@example.com", "topic": "Press", "message": "Please add me.", "newsletter": True},
        }
    ]


def _cli_run(tmp_path: Path, *arguments: str) -> tuple[str, list[dict[str, Any]]]:
    out = tmp_path / f"run-{len(list(tmp_path.iterdir()))}.jsonl"
    command = [sys.executable, "-m", "rolloutgym", "run", *arguments, "--out", str(out), "-q"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, [json.loads(line) for line in out.read_text().splitlines()]


def test_env_file_runs_from_the_cli(tmp_path: Path) -> None:
    stdout, lines = _cli_run(tmp_path, str(EXAMPLE), "--policy", "oracle")
    assert lines[0]["env"]["id"] == "file/acme-contact-v0"
    assert "4 trajectories" in stdout and "pass rate 100.0%" in stdout, stdout


@pytest.mark.chromium
def test_env_file_and_shop_run_from_the_cli_on_chromium(tmp_path: Path, chromium: str) -> None:
    stdout, _ = _cli_run(tmp_path, str(EXAMPLE), "--policy", "oracle", "--backend", "chromium")
    assert "pass rate 100.0%" in stdout, stdout
    stdout, lines = _cli_run(
        tmp_path, "browser/shop-v0", "--policy", "oracle", "--backend", "chromium", "--split", "test", "--limit", "3"
    )
    assert lines[0]["options"]["env_kwargs"] == {"backend": "chromium"}
    assert "3 trajectories" in stdout and "pass rate 100.0%" in stdout, stdout


def test_a_verifier_grades_instead_of_the_ground_truth() -> None:
    config = browser_config(initial_url="/signup", pages=[FORM_PAGE])
    verifier = verifier_config(primitive("signed_up", "state_match", expected={"submissions.length": 1}))
    environment = Environment(
        slug="v",
        name="V",
        template="browser",
        config=config,
        verifier=verifier,
        tasks=[
            Task(
                "Sign up.",
                reference_actions=[
                    {"name": "type", "arguments": {"element_id": "email", "text": "a@b.c"}},
                    {"name": "click", "arguments": {"element_id": "signup-submit"}},
                ],
            )
        ],
    )
    factory = compile_browser(environment)
    assert _episode(factory, environment.tasks[0]).score.value == 1.0
    failed = _episode(factory, environment.tasks[0], "null").score
    assert failed.value == 0.0 and "signed_up" in failed.components


@pytest.mark.parametrize(
    ("config", "truth", "message"),
    [
        ({"pages": [FORM_PAGE]}, None, "config.initialUrl: required"),
        (
            browser_config(initial_url="/home", pages=[FORM_PAGE]),
            None,
            "config.initialUrl: '/home' is not one of the pages (/signup)",
        ),
        (
            browser_config(
                initial_url="/signup",
                pages=[browser_page("/signup", title="S", elements=[{"type": "buton", "text": "Go"}])],
            ),
            None,
            "config.pages[0].elements[0].type: unknown element type 'buton'. Did you mean 'button'?",
        ),
        (
            browser_config(
                initial_url="/signup",
                pages=[browser_page("/signup", title="S", elements=[{"type": "link", "text": "Go"}])],
            ),
            None,
            "config.pages[0].elements[0]: a link needs 'href'",
        ),
        (
            browser_config(
                initial_url="/signup",
                pages=[browser_page("/signup", title="S", elements=[{"type": "select", "name": "x", "options": []}])],
            ),
            None,
            "config.pages[0].elements[0].options: a select needs a non-empty list of options",
        ),
        (
            browser_config(initial_url="/signup", pages=[FORM_PAGE, FORM_PAGE]),
            None,
            "config.pages[1].url: '/signup' is defined twice",
        ),
        (
            browser_config(initial_url="/signup", pages=[FORM_PAGE]),
            {"expected": 1},
            "hidden_ground_truth: unknown key(s) expected; the browser template reads submissions, state, url",
        ),
        (browser_config(initial_url="/signup", pages=[FORM_PAGE]), {"submissions": [{"fields": {"phone": "1"}}]}, None),
    ],
)
def test_malformed_configs_and_ground_truth_name_the_problem(
    config: dict[str, Any], truth: Any, message: str | None
) -> None:
    if message is None:  # a submission no form can make: no oracle, but the env still builds
        factory = compile_browser(_environment(config, truth))
        environment = factory(Task("Sign up.", truth))
        asyncio.run(environment.reset())
        from rolloutgym_protocol.errors import PolicyError

        with pytest.raises(PolicyError, match="has no reference solution"):
            environment.oracle_action()
        return
    with pytest.raises(EnvFileError) as raised:
        compile_browser(_environment(config, truth))
    assert message in str(raised.value)


def test_unknown_env_options_are_named() -> None:
    environment = load_env_file(EXAMPLE)
    with pytest.raises(
        EnvFileError, match="the browser template does not take 'judge'; its options are backend, chromium_path"
    ):
        compile_browser(environment)(environment.tasks[0], judge="gpt")
