"""``rolloutgym improve --method dpo`` and ``--method grpo`` through the CLI against a real platform (SQLite), as
the how-to's SDK table promises: DPO on the preference pairs of a sampled run, GRPO on the run's env itself; both
on hf:tiny, two steps, and each trained model then runs as ``--policy job:ID``."""

from __future__ import annotations

import re

import pytest
from rolloutgym.cli import main

pytest.importorskip("rolloutgym_trl", reason="training jobs need the TRL plugin")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.slow
@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_improve_by_dpo_and_grpo(platform_server, user_home, capsys) -> None:
    assert cli(capsys, "login", platform_server.url, "--key", platform_server.keys["all"])[0] == 0
    assert cli(capsys, "push", "trl/digits-v0")[0] == 0
    code, out = cli(
        capsys, "run", "trl/digits-v0", "--remote", "--policy", "hf:tiny", "-n", "4", "--split", "train",
        "--limit", "6", "--policy-arg", "max_tokens=8", "--policy-arg", "seed=0",
    )  # fmt: skip
    assert code == 0, out
    sampled = re.search(r"run (run_\w+) succeeded", out).group(1)
    for method in ("dpo", "grpo"):
        code, out = cli(
            capsys, "improve", "--run", sampled, "--model", "hf:tiny", "--method", method, "--steps", "2", "--wait"
        )
        assert code == 0, out
        job = re.search(r"job (job_\w+): succeeded", out).group(1)
        code, out = cli(capsys, "job", job)
        assert code == 0 and "succeeded" in out and method in out, out
        code, out = cli(
            capsys, "run", "trl/digits-v0", "--remote", "--policy", f"job:{job}", "--limit", "2",
            "--policy-arg", "max_tokens=8",
        )  # fmt: skip
        assert code == 0 and "succeeded" in out, out
