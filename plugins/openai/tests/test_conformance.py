"""The policy conformance kit against a REAL local HTTP server.

``ChatCompletionsServer`` listens on 127.0.0.1 (an ephemeral port) and speaks the
chat-completions wire format; nothing is mocked and no network or API key is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rolloutgym_openai import make_policy
from rolloutgym_openai.testing import ChatCompletionsServer
from rolloutgym_testing import PolicyConformanceTests


@pytest.fixture(scope="module")
def chat_server() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer() as server:
        yield server


class TestOpenAIPolicyConformance(PolicyConformanceTests):
    @pytest.fixture(autouse=True)
    def _use_server(self, chat_server: ChatCompletionsServer) -> None:
        self.server = chat_server

    def make_policy(self) -> Any:
        return make_policy("test-model", base_url=self.server.url, max_retries=0, timeout=10)


def test_plugin_module_imports_nothing_heavy() -> None:
    """'rolloutgym list' imports plugin.py: it must not pull in a client library or a model stack."""
    import subprocess
    import sys

    heavy = ["httpx", "openai", "vllm", "tinker", "tinker_cookbook", "torch", "transformers"]
    code = f"import sys, rolloutgym_openai.plugin; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
