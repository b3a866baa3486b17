"""Every snippet of the rolloutlib 0.2.0 README (seed 000) runs against rolloutgym.

The snippets are kept as written, with ``rolloutlib`` replaced by ``rolloutgym``; the
names the README leaves to the user (``model``, ``item``, ``execute_tool``,
``sample_answer``, ...) get tiny stand-ins defined here.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import gymnasium as gym


def test_environments_snippet() -> None:
    from rolloutgym import Env

    class EchoEnv(Env):
        action_space = gym.spaces.Discrete(10)
        observation_space = gym.spaces.Text(min_length=0, max_length=20)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return "ready", {}

        def step(self, action):
            return str(action), float(action), True, False, {}

    env = EchoEnv()
    assert env.reset(seed=1) == ("ready", {})
    assert env.step(3) == ("3", 3.0, True, False, {})
    assert isinstance(env, gym.Env)


def test_async_env_snippet() -> None:
    from rolloutgym import AsyncEnv

    async def execute_tool(action):
        return f"ran {action}"

    observation, reward, terminated, truncated = "start", 1.0, True, False
    next_observation = "done"

    class ToolEnv(AsyncEnv):
        action_space = gym.spaces.Discrete(3)
        observation_space = gym.spaces.Text(max_length=20)

        async def reset(self, *, seed=None, options=None):
            await super().reset(seed=seed, options=options)
            return observation, {}

        async def step(self, action):
            result = await execute_tool(action)
            return next_observation, reward, terminated, truncated, {"result": result}

    env = ToolEnv()

    async def main():
        assert await env.reset(seed=2) == ("start", {})
        return await env.step(1)

    assert asyncio.run(main()) == ("done", 1.0, True, False, {"result": "ran 1"})
    assert env.np_random_seed == 2


def test_grading_wrapper_snippet() -> None:
    from rolloutgym import GradingWrapper, Score
    from rolloutgym.graders import Criterion, Rubric

    class ExistingEnv(gym.Env):
        action_space = gym.spaces.Text(max_length=10)
        observation_space = gym.spaces.Text(max_length=10)

        def __init__(self, item):
            self.item = item
            self.state = {"answer": item.answer}

        def reset(self, *, seed=None, options=None):
            return "q", {}

        def step(self, action):
            return "", 0.0, True, False, {}

    item = SimpleNamespace(answer="42", rubric=Rubric(criteria=(Criterion(id="correct", description="Right answer."),)))

    def grader(graded_input, rubric):
        _, state, action = graded_input
        return Score(1.0 if action == state["answer"] else 0.0)

    environment = GradingWrapper(
        ExistingEnv(item),
        rubric=item.rubric,
        grader=grader,
        make_input=lambda env, action: (item, env.state, action),
    )
    environment.reset()
    _, reward, _, _, info = environment.step("42")
    assert reward == 1.0
    assert Score.from_info(info).value == 1.0
    assert Score.from_info(info).metadata["rubric_fingerprint"] == item.rubric.fingerprint


def test_spaces_snippet() -> None:
    from rolloutgym import spaces

    token_sequence = spaces.tokens.sequence(vocab_size=128_000)
    chat = spaces.messages.chat(min_length=1)
    tool_call = spaces.tools.call(
        {"search": gym.spaces.Dict({"query": spaces.text.text(min_length=1, max_length=1_000)})}
    )
    tool_calls = spaces.tools.calls({"search": gym.spaces.Dict({"query": spaces.text.text()})})
    assert token_sequence.contains((1, 2))
    assert chat.contains([{"role": "user", "content": "hi"}])
    assert tool_call.contains({"name": "search", "arguments": {"query": "x"}})
    assert tool_calls.contains(({"name": "search", "arguments": {"query": ""}},))


def test_rollouts_snippet() -> None:
    from rolloutgym import PolicyOutput, rollout
    from rolloutgym.rollouts import rollout_group

    class Model:
        logprobs = (-0.1, -0.2)

        def generate(self, observation):
            return (11, 12), "ok"

    model = Model()

    class Env(gym.Env):
        action_space = gym.spaces.Text(max_length=10)
        observation_space = gym.spaces.Text(max_length=10)

        def reset(self, *, seed=None, options=None):
            return "hi", {}

        def step(self, action):
            return "", 1.0 if action == "ok" else 0.0, True, False, {}

    environment = Env()
    make_env = lambda item: Env()  # noqa: E731
    item = {"q": 1}

    def policy(observation):
        tokens, text = model.generate(observation)
        return PolicyOutput(
            action=text,
            tokens=tokens,
            logprobs=model.logprobs,
        )

    trajectory = rollout(environment, policy)
    assert trajectory.steps[0].policy_tokens == (11, 12)

    group = rollout_group(
        item,
        make_env,
        policy,
        num_rollouts=8,
        item_id="problem-17",
    )

    _ = group.trajectories  # independent episodes for one item
    _ = group.rewards  # scalar scores consumed by an algorithm
    assert len(group.trajectories) == 8 and group.rewards == (1.0,) * 8 and group.item_id == "problem-17"


def test_datasets_snippet() -> None:
    from rolloutgym.datasets import Dataset, RLDataset

    problem_a = SimpleNamespace(id="a")
    problem_b = SimpleNamespace(id="b")
    ProblemEnv = lambda problem: ("env", problem.id)  # noqa: E731

    items = Dataset([problem_a, problem_b], metadata={"split": "train"})
    rl_items = RLDataset(
        [problem_a, problem_b],
        make_env=lambda problem: ProblemEnv(problem),
        get_item_id=lambda problem: problem.id,
    )
    assert len(items) == 2 and items.metadata == {"split": "train"}
    assert rl_items.item_id(1) == "b" and rl_items.make_env(problem_a) == ("env", "a")


def test_graders_snippet() -> None:
    from rolloutgym.graders import CompositeGrader, Criterion, Rubric, Score

    def llm_criterion_grader(context, criterion):
        return 0.5

    def exact_answer_grader(context, criterion):
        return Score(1.0 if context["answer"] == "42" else 0.0, feedback="Checked.")

    context = {"answer": "42"}

    rubric = Rubric(
        criteria=(
            Criterion(
                id="correctness",
                description="The answer is correct.",
                weight=1.0,
            ),
            Criterion(
                id="format",
                description="The requested format is followed.",
                weight=0.2,
            ),
        ),
        instructions="Grade only the submitted answer.",
    )

    grader = CompositeGrader(
        llm_criterion_grader,
        overrides={"correctness": exact_answer_grader},
    )

    score = grader.score(context, rubric)

    async def main():
        return await grader.ascore(context, rubric)

    async_score = asyncio.run(main())
    reward = score.value
    assert abs(reward - (1.0 + 0.2 * 0.5) / 1.2) < 1e-12
    assert async_score == score


def test_score_snippet() -> None:
    from rolloutgym.graders import Score

    info: dict = {}
    score = Score(
        0.75,
        {
            "correctness": Score(1.0, feedback="Correct."),
            "format": Score(0.5, feedback="One required heading is missing."),
        },
    )
    info.update(score.as_info())
    assert Score.from_info(info) == score


def test_llm_grader_snippet() -> None:
    from rolloutgym.graders import Criterion, LLMGrader, Rubric

    rubric = Rubric(criteria=(Criterion(id="c", description="Helpful."),))

    async def sample(chat):
        await asyncio.sleep(0)
        return "score: 0.8"

    grader = LLMGrader(
        sample=sample,
        render=lambda graded_input, rubric: [{"role": "user", "content": f"Grade {graded_input}"}],
        parse=lambda text, rubric: float(text.split(":")[1]),
    )

    async def main():
        return await grader.ascore("answer", rubric)

    assert asyncio.run(main()).value == 0.8
