"""The worked example of docs/how-to/batch-rollouts.md (porting seed code by changing imports) runs
as written, with the real hf:tiny model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "batch-rollouts.md"


def test_the_seed_port_example_runs_as_written(tmp_path: Path) -> None:
    text = DOC.read_text()
    block = re.search(r"<!-- seed-port-example -->\n```python\n(.*?)```", text, re.DOTALL)
    assert block, "the seed-port example block is missing from batch-rollouts.md"
    script = tmp_path / "example.py"
    script.write_text(block.group(1))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rewards, roles = result.stdout.strip().splitlines()[-2:]
    assert re.fullmatch(r"\[(0\.0|1\.0), (0\.0|1\.0)\] 2", rewards)
    assert roles == "['user', 'assistant', 'environment']"  # the env's last word ends the log, as in the seed
