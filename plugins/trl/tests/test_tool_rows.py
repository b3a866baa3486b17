"""Tool envs in SFT/DPO rows: the tool schemas appear once per row, in the template's own way, and can be shortened.

A real run file of ``toy/guess-v0`` (the oracle's binary search: several tool-calling turns)
is rendered with the ``hf:tiny`` tokenizer, exactly as ``rolloutgym train sft`` renders it.
"""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl.offline_rows import read_runs, sft_rows, shorten_tools


@pytest.fixture(scope="module")
def rows_by_mode(tmp_path_factory):
    from rolloutgym_transformers import build_tiny

    path = tmp_path_factory.mktemp("runs") / "guess.jsonl"
    rg.run("toy/guess-v0", policy="oracle", limit=3, out=path)
    _model, tokenizer = build_tiny()
    runs = read_runs([path])
    return tokenizer, {mode: sft_rows(runs, tokenizer, tool_schemas=mode) for mode in ("full", "short", "names")}


def test_each_row_describes_the_tools_once_however_many_turns(rows_by_mode) -> None:
    tokenizer, rows = rows_by_mode
    (tool,) = rg.llm.env_tools(rg.make("toy/guess-v0"))
    description = (tool.get("function") or tool)["description"]
    for row in rows["full"]:
        text = tokenizer.decode(row["input_ids"])
        assert text.count("<tool_call>") >= 2  # several tool-calling turns in the row...
        assert text.count(description) == 1  # ...and the schema once, in the prompt


def test_shorter_schemas_make_shorter_rows_with_the_same_trained_tokens(rows_by_mode) -> None:
    tokenizer, rows = rows_by_mode
    lengths = {mode: [len(row["input_ids"]) for row in rows[mode]] for mode in rows}
    assert all(n < s < f for n, s, f in zip(lengths["names"], lengths["short"], lengths["full"], strict=True)), lengths
    trained = {mode: [sum(row["completion_mask"]) for row in rows[mode]] for mode in rows}
    assert trained["names"] == trained["short"] == trained["full"]


def test_shorten_tools_keeps_names_types_and_required() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "issue_refund",
                "description": "Refund an order. Only delivered orders within 30 days.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string", "description": "The order, e.g. O-1."}},
                    "required": ["order_id"],
                },
            },
        }
    ]
    (short,) = shorten_tools(tools, "short")
    assert short["function"] == {
        "name": "issue_refund",
        "description": "Refund an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    }
    (names,) = shorten_tools(tools, "names")
    assert names["function"] == {"name": "issue_refund", "parameters": {"type": "object", "required": ["order_id"]}}
    with pytest.raises(ConfigError, match="full, short, names"):
        shorten_tools(tools, "tiny")
