"""A local model's run shows signs of life before its first episode ends (issue 40: ``hf:smollm2``
sat at ``0/3`` for 51 minutes): the sampler counts each decoded token, and ``rolloutgym run``'s
progress bar shows the count and rate on a terminal; the shipped small models decode on one
CPU thread unless told otherwise."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import torch
from rolloutgym.llm import SamplingParams
from rolloutgym.runner.activity import tokens_generated
from rolloutgym_transformers import make_policy
from rolloutgym_transformers.sampler import TransformersSampler

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def test_each_decoded_token_is_counted_and_small_models_take_one_thread() -> None:
    before_threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        policy = make_policy("tiny", max_tokens=12, device="cpu", greedy=True)
        assert torch.get_num_threads() == 1, "tiny decodes on one thread unless told otherwise"
        make_policy("tiny", max_tokens=12, device="cpu", threads=2)
        assert torch.get_num_threads() == 2, "the threads option still wins"
        sampler = TransformersSampler(policy.loaded.model, policy.loaded.tokenizer, device="cpu")
        before = tokens_generated()
        sample = sampler.sample_sync([1, 2, 3], SamplingParams(max_tokens=12, temperature=0))
        assert tokens_generated() - before == len(sample.token_ids) > 0
    finally:
        torch.set_num_threads(before_threads)


def test_the_progress_bar_shows_tokens_while_a_local_model_runs(tmp_path: Path) -> None:
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm", NO_COLOR="1")
    command = [sys.executable, "-m", "rolloutgym", "run", "toy/arith-v0", "--policy", "hf:tiny", "--limit", "2"]
    process = subprocess.Popen(
        [*command, "-o", str(tmp_path / "run.jsonl")], stdin=secondary, stdout=secondary, stderr=secondary, env=env
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    shown = ANSI.sub("", b"".join(chunks).decode(errors="replace"))
    assert process.wait(timeout=120) == 0, shown
    counts = [int(value.replace(",", "")) for value in re.findall(r"tokens ([\d,]+)", shown)]
    assert counts and counts[-1] > 0, shown
