"""The policy conformance kit on ``harness:command``: a real subprocess harness that asks the
interception endpoint (hf:tiny) once per turn over HTTP (stdlib urllib: a fast start), then answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_harness.harness import make_policy
from rolloutgym_testing import PolicyConformanceTests

AGENT = """
import json, os, sys, urllib.request
task = open(sys.argv[1]).read()
body = {"model": "m", "messages": [{"role": "user", "content": task}], "max_tokens": 4}
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
                                 {"content-type": "application/json"})
json.load(urllib.request.urlopen(request, timeout=60))
print("7")
"""


class TestCommandHarnessConformance(PolicyConformanceTests):
    @pytest.fixture(autouse=True)
    def _agent(self, tmp_path: Path) -> None:
        self.agent = tmp_path / "agent.py"
        self.agent.write_text(AGENT)

    def make_policy(self) -> Any:
        return make_policy("command", command=f"{sys.executable} {self.agent} {{instruction_file}}", model="hf:tiny")


def test_plugin_module_imports_nothing_heavy() -> None:
    """'rolloutgym list' imports plugin.py: no server, client or model stack."""
    heavy = ["starlette", "uvicorn", "httpx", "openai", "anthropic", "torch", "transformers"]
    code = f"import sys, rolloutgym_harness.plugin; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
