"""The policy conformance kit on the vllm policy's server path, against a REAL local HTTP server.

``CompletionsServer`` (127.0.0.1) speaks vLLM's ``/v1/completions`` wire format with
scripted token ids; the tokenizer is a byte-level tokenizer built in code (no download).
"""

from __future__ import annotations

from typing import Any

import pytest
from rolloutgym_testing import PolicyConformanceTests
from rolloutgym_vllm import make_policy
from rolloutgym_vllm.testing import CompletionsServer, byte_tokenizer

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


def decode(tokens: Any) -> str:
    return TOKENIZER.decode(list(tokens), skip_special_tokens=False)


class TestVLLMServerPolicyConformance(PolicyConformanceTests):
    @pytest.fixture(autouse=True)
    def _server(self) -> Any:
        with CompletionsServer([TOKENIZER.encode("42", add_special_tokens=False) + [END]], decode=decode) as server:
            self.server = server
            yield

    def make_policy(self) -> Any:
        return make_policy("test-model", base_url=self.server.url, tokenizer=TOKENIZER, timeout=10)


def test_plugin_module_imports_nothing_heavy() -> None:
    """'rolloutgym list' imports plugin.py: it must not pull in a client library or a model stack."""
    import subprocess
    import sys

    heavy = ["httpx", "openai", "vllm", "tinker", "tinker_cookbook", "torch", "transformers"]
    code = f"import sys, rolloutgym_vllm.plugin; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
