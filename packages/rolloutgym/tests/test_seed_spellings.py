"""The rollout SDK README's command spellings: ``run --model M --n 50`` (and ``--model=M``, ``--n=50``,
``--temperature T``) are read as ours; ``rollout test FILE --model M --task 0 --temperature 0.0`` is answered with
an error naming our command, built from what was typed. Other commands and our own spellings are unchanged."""

from __future__ import annotations

import pytest
from rolloutgym.cli import main, seed_spellings, seed_test_command
from rolloutgym.runs import read_run


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        (["run", "e", "--model", "m", "--n", "50"], ["run", "e", "--policy", "m", "-n", "50"]),
        (["run", "e", "--model=m", "--n=5"], ["run", "e", "--policy", "m", "-n", "5"]),
        (["run", "e", "--temperature", "0.0"], ["run", "e", "--policy-arg", "temperature=0.0"]),
        (["run-remote", "e", "--model", "openai/gpt-4o-mini"], ["run-remote", "e", "--policy", "openai/gpt-4o-mini"]),
        (["run", "e", "--policy", "p", "-n", "2"], ["run", "e", "--policy", "p", "-n", "2"]),
        (["improve", "--model", "hf:tiny"], ["improve", "--model", "hf:tiny"]),  # improve's own --model
        (["show", "--n", "3"], ["show", "--n", "3"]),
    ],
)
def test_the_seed_spellings_are_read_as_ours(typed, read) -> None:
    assert seed_spellings(typed) == read


def test_run_with_the_seed_spellings(tmp_path, capsys) -> None:
    out = tmp_path / "run.jsonl"
    assert main(["run", "toy/guess-v0", "--model", "oracle", "--n", "3", "--limit", "2", "-q", "--out", str(out)]) == 0
    run = read_run(out)
    assert run.header["policy"] == "oracle" and run.header["num_rollouts"] == 3
    second = tmp_path / "second.jsonl"
    assert main(["run", "toy/guess-v0", "--model=random", "--n=2", "--limit", "1", "-q", "--out", str(second)]) == 0
    assert read_run(second).header["policy"] == "random" and read_run(second).header["num_rollouts"] == 2


@pytest.mark.parametrize(
    ("typed", "named"),
    [
        (["test", "my_env.py", "--model", "openai/gpt-4o-mini"],
         "rolloutgym run my_env.py --policy openai/gpt-4o-mini -n 1"),
        (["test", "my_env.py", "--model", "openai/gpt-4o", "--task", "0", "--temperature", "0.0"],
         "rolloutgym run my_env.py --policy openai/gpt-4o --task 0 --policy-arg temperature=0.0 -n 1"),
        (["test", "x.py", "--n", "4"], "rolloutgym run x.py -n 4"),
    ],
)  # fmt: skip
def test_the_seed_test_command_names_ours(typed, named, capsys) -> None:
    assert seed_test_command(typed).endswith(named)
    assert main(typed) == 2
    err = capsys.readouterr().err
    assert "no 'test' command" in err and named in " ".join(err.split())
