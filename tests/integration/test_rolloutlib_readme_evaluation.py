"""The evaluation snippet of the rolloutlib 0.2.0 README runs against rolloutgym.

It lives with the cross-package tests because ``rolloutgym.evals.benchmarks`` comes from the
``rolloutgym-benchmarks`` plugin; the other README snippets are tested in the core package.
"""

from __future__ import annotations


def test_evaluation_snippet() -> None:
    from rolloutgym.evals import Evaluation, run_benchmark
    from rolloutgym.evals.benchmarks import gsm8k
    from rolloutgym.graders import Score

    def sample_answer(observation):
        return "6 times 7 is 42. #### 42"

    benchmark = gsm8k([{"question": "What is 6 times 7?", "answer": "#### 42"}])

    def evaluate(environment):
        observation, _ = environment.reset()
        response = sample_answer(observation)  # user-owned model code
        _, reward, _, truncated, info = environment.step(response)
        return Evaluation(
            score=Score.from_info(info, default=Score(reward)),
            truncated=truncated,
        )

    result = run_benchmark(benchmark, evaluate)
    print(result.score)
    assert result.score == 1.0 and result.num_examples == 1
