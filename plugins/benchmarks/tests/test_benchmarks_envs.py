"""The environments as a user drives them: prompts, answers, invalid actions, the CLI and the seed snippet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym_benchmarks import AIME_PROMPT_SUFFIX, AIMEEnv, GSM8KEnv, MathEnv, MathExample, grade_gsm8k

EXAMPLE = MathExample(question="What is 6 times 7?", answer="6 * 7 = <<6*7=42>>42\n#### 42", example_id="q1")


def test_prompt_and_answer() -> None:
    environment = GSM8KEnv(EXAMPLE, system_prompt="Be brief.")
    observation, info = environment.reset(seed=0)
    assert observation[0] == {"role": "system", "content": "Be brief."}
    assert observation[1]["role"] == "user" and observation[1]["content"].startswith("What is 6 times 7?")
    assert "####" in observation[1]["content"]
    assert info == {"example_id": "q1"}
    observation, reward, terminated, truncated, info = environment.step("6 times 7 is 42.\n#### 42")
    assert (observation, reward, terminated, truncated) == ([], 1.0, True, False)
    assert info["score"]["components"]["correct"]["value"] == 1.0
    assert info["invalid_actions"] == 0
    environment.close()
    environment.close()


def test_oracle_and_null() -> None:
    environment = GSM8KEnv(EXAMPLE)
    environment.reset()
    assert "<<" not in environment.oracle_action() and environment.oracle_action().endswith("#### 42")
    assert environment.step(environment.null_action())[1] == 0.0
    aime_environment = AIMEEnv(MathExample(question="P", answer="070"))
    observation, _ = aime_environment.reset()
    assert observation[-1]["content"].endswith(AIME_PROMPT_SUFFIX)
    assert aime_environment.oracle_action() == "The answer is \\boxed{70}."
    assert aime_environment.step(aime_environment.oracle_action())[1] == 1.0


def test_invalid_actions_score_zero_without_crashing() -> None:
    environment = GSM8KEnv(EXAMPLE)
    environment.reset()
    _, reward, terminated, _, info = environment.step({"role": "assistant", "tool_calls": []})
    assert reward == 0.0 and terminated and info["invalid_actions"] == 1
    assert "must be text" in info["score"]["feedback"]
    environment.reset()
    _, reward, _, _, info = environment.step({"role": "assistant", "content": "#### 42"})
    assert reward == 1.0 and info["invalid_actions"] == 0
    with pytest.raises(RuntimeError, match="reset"):
        environment.step("#### 42")


def test_math_env_with_any_grader() -> None:
    environment = MathEnv(EXAMPLE, grade_gsm8k, prompt_suffix=" Answer briefly.")
    observation, _ = environment.reset()
    assert observation == [{"role": "user", "content": "What is 6 times 7? Answer briefly."}]
    assert environment.step(r"\boxed{42}")[1] == 1.0
    with pytest.raises(TypeError, match="MathExample"):
        MathEnv({"question": "Q", "answer": "1"}, grade_gsm8k)  # type: ignore[arg-type]


def test_registry_make_and_kwargs() -> None:
    environment = rg.make("bench/gsm8k-v0", task="gsm8k-sample-21", symbolic=True)
    assert isinstance(environment, GSM8KEnv)
    assert environment.example.example_id == "gsm8k-sample-21"
    environment.reset(seed=1)
    assert environment.step(environment.oracle_action())[1] == 1.0


@pytest.mark.parametrize(("policy", "expected"), [("oracle", 1.0), ("null", 0.0)])
def test_cli_run_offline(tmp_path: Path, policy: str, expected: float) -> None:
    from rolloutgym.cli import main

    out = tmp_path / "run.jsonl"
    assert main(["run", "bench/gsm8k-v0", "--policy", policy, "--limit", "5", "-q", "--out", str(out)]) == 0
    groups = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert len(groups) == 5
    assert {score["value"] for group in groups for score in group["scores"]} == {expected}


def test_seed_readme_evaluation_snippet() -> None:
    """The seed README's evaluation example, with rolloutgym imports."""
    from rolloutgym.evals import Evaluation, run_benchmark
    from rolloutgym.evals.benchmarks import gsm8k
    from rolloutgym.graders import Score

    benchmark = gsm8k([{"question": "What is 6 times 7?", "answer": "#### 42"}])

    def sample_answer(observation: list[dict[str, str]]) -> str:  # user-owned model code
        assert "6 times 7" in observation[-1]["content"]
        return "6 times 7 is 42."

    def evaluate(environment):
        observation, _ = environment.reset()
        response = sample_answer(observation)
        _, reward, _, truncated, info = environment.step(response)
        return Evaluation(
            score=Score.from_info(info, default=Score(reward)),
            truncated=truncated,
        )

    result = run_benchmark(benchmark, evaluate)
    assert result.score == 1.0
    assert result.components == {"correct": 1.0, "formatted": 0.0}
    assert result.records[0].item_id.startswith("gsm8k:")


def test_shim_exports_the_rolloutlib_names() -> None:
    import rolloutgym.evals.benchmarks as shim
    import rolloutgym_benchmarks

    names = {
        "MathEnv",
        "GSM8KEnv",
        "AIMEEnv",
        "gsm8k",
        "aime",
        "make",
        "REGISTRY",
        "extract_gsm8k_answer",
        "extract_aime_answer",
        "grade_gsm8k",
        "grade_aime",
        "AIME_PROMPT_SUFFIX",
        "MathExample",
        "make_example_id",
    }
    assert names <= set(shim.__all__)
    for name in names - {"REGISTRY", "make"}:
        assert getattr(shim, name) is getattr(rolloutgym_benchmarks, name)
    # The shim's REGISTRY and make look benchmarks up in the registry (hook rolloutgym_benchmarks).
    assert shim.REGISTRY == rolloutgym_benchmarks.REGISTRY
    assert shim.make("gsm8k", [EXAMPLE]).items == rolloutgym_benchmarks.make("gsm8k", [EXAMPLE]).items
    with pytest.raises(ValueError, match=r"unknown benchmark 'mmlu'; choose from \['aime', 'gsm8k'\]"):
        shim.make("mmlu")


def test_options_are_checked_when_the_env_is_made() -> None:
    with pytest.raises(ValueError, match="'first' or 'last'"):
        GSM8KEnv(EXAMPLE, boxed="middle")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="true or false"):
        GSM8KEnv(EXAMPLE, symbolic="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_boxed_answers"):
        GSM8KEnv(EXAMPLE, max_boxed_answers=0)
    # Two different boxes are a hedge by default; max_boxed_answers=None is rolloutlib's
    # behaviour, where ``boxed`` picks one of them.
    hedged = GSM8KEnv(EXAMPLE, boxed="first")
    hedged.reset()
    assert hedged.step(r"\boxed{42} then \boxed{7}")[1] == 0.0
    first = GSM8KEnv(EXAMPLE, boxed="first", max_boxed_answers=None)
    first.reset()
    assert first.step(r"\boxed{42} then \boxed{7}")[1] == 1.0
    last = GSM8KEnv(EXAMPLE, max_boxed_answers=None)
    last.reset()
    assert last.step(r"\boxed{42} then \boxed{7}")[1] == 0.0


def test_envs_pickle() -> None:
    import pickle

    for environment in (GSM8KEnv(EXAMPLE, symbolic=True), AIMEEnv(MathExample(question="P", answer="5"))):
        copy = pickle.loads(pickle.dumps(environment))
        copy.reset()
        assert copy.step(copy.oracle_action())[1] == 1.0
