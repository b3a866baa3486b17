"""Verifier primitives, paths, state diffs and the weighted Verifier."""

from __future__ import annotations

import pytest
from rolloutgym.declarative import EnvFileError, Task
from rolloutgym.verifiers import (
    APPEND,
    LENGTH,
    ToolCallRecord,
    VerifierContext,
    build_verifier,
    contains_terms,
    final_answer,
    get_path,
    ground_truth_match,
    llm_judge,
    no_tool_errors,
    parse_path,
    set_path,
    state_diff,
    state_match,
    tool_was_called,
)
from rolloutgym_protocol.errors import ConfigError

STATE = {
    "refunds": [{"order_id": "O-1", "amount": 100}],
    "files": {"src/a.py": "print(1)", "length": 3},
    "grid": [[1, 2], [3, 4]],
    "profile": {"name": "Ada"},
}


def context(**overrides):
    values = {"final_state": STATE, "final_output": "Refunded $100 for O-1.", "tool_calls": (), "task": None}
    values.update(overrides)
    return VerifierContext(**values)


def test_paths_parse_escapes_indices_length_and_append():
    assert parse_path("refunds[0].amount") == ("refunds", 0, "amount")
    assert parse_path("files.src/a\\.py") == ("files", "src/a.py")
    assert parse_path('files["src/a.py"]') == ("files", "src/a.py")
    assert parse_path("grid[1][0]") == ("grid", 1, 0)
    assert parse_path("refunds.length") == ("refunds", LENGTH)
    assert parse_path('files["length"]') == ("files", "length")
    assert parse_path("notes[]") == ("notes", APPEND)
    assert get_path(STATE, "files.src/a\\.py") == (True, "print(1)")
    assert get_path(STATE, "grid[1][0]") == (True, 3)
    assert get_path(STATE, "refunds.length") == (True, 1)
    assert get_path(STATE, "missing.length") == (True, 0)
    assert get_path(STATE, "files.length") == (True, 3)  # an object's own 'length' key wins
    assert get_path(STATE, "profile.name.length") == (True, 3)
    assert get_path(STATE, "refunds[5].amount") == (False, None)
    for bad in ("", "a..b", "a[", "a[x]", "a[].b"):
        with pytest.raises(ValueError):
            parse_path(bad)


def test_set_path_nested_and_append():
    state: dict = {}
    set_path(state, "profile.address.city", "Paris")
    set_path(state, "notes[]", "first")
    set_path(state, "notes[]", {"n": 2})
    assert state == {"profile": {"address": {"city": "Paris"}}, "notes": ["first", {"n": 2}]}
    with pytest.raises(ValueError, match="not a list"):
        set_path(state, "profile[]", 1)


def test_state_diff_names_each_difference():
    expected = {"refunds": [{"order_id": "O-7", "amount": 100}, {"order_id": "O-1", "amount": 100}]}
    actual = {"refunds": [{"order_id": "O-1", "amount": 90}, {"order_id": "O-9", "amount": 5}]}
    lines = state_diff(expected, actual)
    assert 'refunds: missing refund for order_id "O-7" (expected {"amount": 100, "order_id": "O-7"})' in lines
    assert "refunds[0].amount: expected 100, got 90" in lines
    assert any(line.startswith('refunds: unexpected refund for order_id "O-9"') for line in lines)
    assert state_diff({"a": 100}, {"a": 100.0}) == []
    assert state_diff({"a": 100}, {"a": 100.004}, tolerance=0.005) == []
    assert state_diff({"a": 1}, {"a": True}) == ["a: expected 1, got true"]
    assert state_diff({"a": "1"}, {"a": 1}) == ['a: expected "1", got 1']
    assert state_diff({"tags": ["b", "a"]}, {"tags": ["a", "b"]}, unordered=True) == []
    assert state_diff({"tags": ["b", "a"]}, {"tags": ["a", "b"]}) == [
        'tags[0]: expected "b", got "a"',
        'tags[1]: expected "a", got "b"',
    ]
    assert state_diff({"x": {"y": 1}}, {"x": {"y": 1, "extra": 2}}) == []  # objects match as subsets


def test_state_match():
    grader = state_match(expected={"refunds.length": 1, "refunds[0].amount": 100, "files.src/a\\.py": "print(1)"})
    assert grader(context()).value == 1.0
    failed = state_match(expected={"refunds.length": 2, "profile.email": "a@b"})(context())
    assert failed.value == 0.0
    assert failed.feedback == 'refunds.length: expected 2, got 1; profile.email: missing (expected "a@b")'
    assert state_match(expected={"profile.email": None})(context()).value == 1.0
    with pytest.raises(ConfigError, match="expected"):
        state_match(expected={})


def test_contains_terms_and_final_answer():
    assert contains_terms(terms=["Refunded", "O-1"])(context()).value == 1.0
    result = contains_terms(terms=["refunded"])(context())
    assert result.value == 0.0 and "does not mention 'refunded'" in result.feedback
    assert contains_terms(terms=["refunded"], case_sensitive=False)(context()).value == 1.0
    assert contains_terms(terms=["Ada"], field="state")(context()).value == 1.0
    task = Task(instruction="status?", metadata={"answer_terms": ["shipped"]})
    assert contains_terms(terms_from_task="answer_terms")(context(task=task)).value == 0.0
    assert (
        contains_terms(terms_from_task="answer_terms")(context(task=task, final_output="It has shipped.")).value == 1.0
    )
    with pytest.raises(ConfigError, match="field"):
        contains_terms(terms=["x"], field="everything")
    assert final_answer()(context(final_output="  ")).feedback.startswith("the agent gave no final answer")
    assert final_answer()(context()).value == 1.0


def test_tool_primitives():
    calls = (
        ToolCallRecord("refund", {"order_id": "O-1", "amount": 100}, {"ok": True}),
        ToolCallRecord("refund", {"order_id": "O-2", "amount": 5}, None, "not found"),
        ToolCallRecord("lookup", {"id": "x"}, {}),
    )
    run = context(tool_calls=calls)
    assert tool_was_called(tool="refund")(run).value == 1.0
    assert tool_was_called(tool="refund", count=1)(run).feedback == "'refund' called 2x (expected exactly 1x)"
    assert tool_was_called(tool="refund", arguments={"order_id": "O-1"}, count=1)(run).value == 1.0
    assert tool_was_called(tool="refund", include_errors=False, count=1)(run).value == 1.0
    assert tool_was_called(tool="cancel")(run).value == 0.0
    failed = no_tool_errors()(run)
    assert failed.value == 0.0 and failed.feedback == "1 tool call(s) failed: refund: not found"
    assert no_tool_errors()(context()).value == 1.0


def test_ground_truth_match_gives_a_state_diff():
    task = Task(instruction="Refund O-7", hidden_ground_truth={"refunds": [{"order_id": "O-7", "amount": 100}]})
    right = ground_truth_match()(
        context(
            task=task, final_state={"refunds": [{"order_id": "O-7", "amount": 100.0, "note": "extra keys are fine"}]}
        )
    )
    assert right.value == 1.0
    wrong_amount = ground_truth_match()(
        context(task=task, final_state={"refunds": [{"order_id": "O-7", "amount": 90}]})
    )
    assert "refunds[0].amount: expected 100, got 90" in wrong_amount.feedback
    wrong_order = ground_truth_match()(
        context(task=task, final_state={"refunds": [{"order_id": "O-8", "amount": 100}]})
    )
    assert (
        'missing refund for order_id "O-7"' in wrong_order.feedback
        and 'unexpected refund for order_id "O-8"' in wrong_order.feedback
    )
    nothing = ground_truth_match()(context(task=Task(instruction="x")))
    assert nothing.value == 0.0 and "no hidden_ground_truth" in nothing.feedback
    ignored = ground_truth_match(ignore=["refunds"])(
        context(task=Task(instruction="x", hidden_ground_truth={"refunds": [], "profile": {"name": "Ada"}}))
    )
    assert ignored.value == 1.0


def test_verifier_weights_threshold_and_binary_scoring():
    config = {
        "primitives": [
            {"name": "refunded", "type": "state_match", "expected": {"refunds.length": 1}, "weight": 3},
            {"name": "mentions", "type": "contains_terms", "terms": ["cancelled"]},
        ]
    }
    score = build_verifier(config)(context())
    assert score.value == pytest.approx(0.75)
    assert score.metadata["passed"] is False
    assert score.feedback.startswith(
        "failed: 1/2 checks passed. [mentions] the final answer does not mention 'cancelled'"
    )
    assert score.components["refunded"].value == 1.0
    assert build_verifier({**config, "threshold": 0.7})(context()).metadata["passed"] is True
    assert build_verifier({**config, "scoring": "binary"})(context()).value == 0.0
    assert build_verifier({**config, "scoring": "binary", "threshold": 0.7})(context()).value == 1.0
    with pytest.raises(EnvFileError, match="scoring"):
        build_verifier({**config, "scoring": "average"})


class EchoJudge:
    """A judge policy that answers with a fixed JSON verdict (a real policy callable)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.seen: list = []

    def __call__(self, observation):
        self.seen.append(observation)
        return {"role": "assistant", "content": self.reply}


def test_llm_judge_uses_the_judge_and_fails_clearly_without_one():
    grader = llm_judge(rubric="Polite and mentions the refund amount.")
    judge = EchoJudge('{"score": 0.8, "reason": "polite, mentions $100"}')
    result = grader(context(judge=judge, task=Task(instruction="Refund O-1")))
    assert result.value == 0.8 and "polite, mentions $100" in result.feedback
    assert "Refund O-1" in judge.seen[0][1]["content"] and "Polite" in judge.seen[0][1]["content"]
    assert grader(context(judge=EchoJudge("no idea"))).value == 0.0
    with pytest.raises(ConfigError, match="needs a judge policy"):
        grader(context())
    verifier = build_verifier({"primitives": [{"name": "tone", "type": "llm_judge", "rubric": "r"}]})
    assert verifier.requires_judge


async def _async_reply(observation):
    return {"role": "assistant", "content": '{"score": 1}'}


def test_llm_judge_accepts_an_async_judge():
    assert llm_judge(rubric="r")(context(judge=_async_reply)).value == 1.0
