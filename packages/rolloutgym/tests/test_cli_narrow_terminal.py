"""Tables on a real terminal (a pseudo-terminal of 80 columns): no file name, env id or task id
is ever cut to '…' (issue 40: ``rolloutgym runs`` was unreadable at 80 columns); a table that
fits is still drawn as a table."""

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

import pytest

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def _on_terminal(arguments: list[str], columns: int, cwd: Path) -> str:
    """What ``rolloutgym ARGUMENTS`` prints on a terminal ``columns`` wide."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm", NO_COLOR="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "rolloutgym", *arguments],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        cwd=cwd,
        env=env,
        close_fds=True,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("narrow")
    names = ["toy-guess-v0-20261207-232957.jsonl", "a-rather-long-run-name-of-a-refund-agent-baseline.jsonl"]
    for name, env_id in zip(names, ["toy/guess-v0", "toy/guess-v0"], strict=True):
        command = [sys.executable, "-m", "rolloutgym", "run", env_id, "--policy", "oracle", "-n", "2", "--limit", "3"]
        subprocess.run([*command, "-q", "-o", str(root / "runs" / name)], check=True, capture_output=True, cwd=root)
    (root / "runs" / "tasks.jsonl").write_text('{"id": "t1", "prompt": "hi"}\n')
    return root


def test_runs_at_80_columns_shows_every_name_whole(runs_folder: Path) -> None:
    shown = _on_terminal(["runs", "runs"], 80, runs_folder)
    assert "…" not in shown, shown
    for name in ("toy-guess-v0-20261207-232957.jsonl", "a-rather-long-run-name-of-a-refund-agent-baseline.jsonl"):
        assert f"\n{name}\n" in shown, shown
    assert "env: toy/guess-v0" in shown and "pass rate: 100.0%" in shown and "state: complete" in shown
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    assert "1 other .jsonl file(s) without a run header left out" in shown


def test_runs_on_a_wide_terminal_is_a_table(runs_folder: Path) -> None:
    shown = _on_terminal(["runs", "runs"], 200, runs_folder)
    assert "┃ file" in shown and "…" not in shown, shown
    assert "a-rather-long-run-name-of-a-refund-agent-baseline.jsonl" in shown


@pytest.mark.parametrize("columns", [60, 80])
def test_show_and_compare_at_narrow_widths_cut_no_id(runs_folder: Path, columns: int) -> None:
    first, second = sorted((runs_folder / "runs").glob("*-*.jsonl"))
    for arguments in (["show", str(first), "--rows", "0"], ["compare", str(first), str(second)]):
        shown = _on_terminal(arguments, columns, runs_folder)
        assert "…" not in shown, (arguments, shown)
        assert "guess-0" in shown, (arguments, shown)


def test_list_at_80_columns_cuts_no_env_id(runs_folder: Path) -> None:
    shown = _on_terminal(["list"], 80, runs_folder)
    ids = re.findall(r"[a-z0-9]+/[a-z0-9.-]+-v\d+", shown)
    assert "toy/guess-v0" in ids and len(ids) > 5, shown
    assert not re.search(r"│ [a-z0-9]+/[a-z0-9.-]*…", shown), shown
