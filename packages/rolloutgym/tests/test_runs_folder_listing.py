"""``rolloutgym runs FOLDER`` lists run files only: a tasks file, an export (JSON lines without a run header) are
left out and counted; a damaged run file is still listed as unreadable."""

from __future__ import annotations

import json

import rolloutgym as rg
from rolloutgym.cli import main


def test_runs_lists_run_files_and_leaves_other_json_lines_out(tmp_path, capsys) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    rg.run("toy/guess-v0", policy="oracle", limit=1, out=folder / "oracle.jsonl")
    (folder / "tasks.jsonl").write_text(json.dumps({"instruction": "x", "hidden_ground_truth": {}}) + "\n")
    (folder / "sft.jsonl").write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}) + "\n")
    (folder / "list.jsonl").write_text("[1, 2]\n")  # JSON, but not an object: may be a damaged run file
    (folder / "damaged.jsonl").write_text("{not json\n")
    (folder / "empty.jsonl").write_text("")
    assert main(["runs", str(folder)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "oracle.jsonl" in out and "damaged.jsonl" in out and "unreadable" in out
    assert "tasks.jsonl" not in out and "sft.jsonl" not in out
    assert "2 other .jsonl file(s) without a run header left out" in out


def test_a_folder_of_only_other_files_says_so(tmp_path, capsys) -> None:
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"instruction": "x"}) + "\n")
    assert main(["runs", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no run files" in out and "1 other .jsonl file(s)" in out
