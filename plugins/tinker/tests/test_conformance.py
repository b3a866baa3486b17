"""The policy conformance kit on the tinker policy, offline.

``StandInSamplingClient`` replaces the remote Tinker service and speaks the SDK's own types
(``tinker.ModelInput`` in, ``tinker.types.SampleResponse`` out); the tokenizer is a real
byte-level Hugging Face tokenizer built in code. Everything else is the real adapter.
"""

from __future__ import annotations

from typing import Any

from rolloutgym_testing import PolicyConformanceTests
from rolloutgym_tinker import policy_from_client
from rolloutgym_tinker.testing import StandInSamplingClient, byte_tokenizer

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


class TestTinkerPolicyConformance(PolicyConformanceTests):
    def make_policy(self) -> Any:
        reply = TOKENIZER.encode("42", add_special_tokens=False) + [END]
        return policy_from_client(StandInSamplingClient([reply]), TOKENIZER, renderer="template")


def test_plugin_module_imports_nothing_heavy() -> None:
    """'rolloutgym list' imports plugin.py: it must not pull in a client library or a model stack."""
    import subprocess
    import sys

    heavy = ["httpx", "openai", "vllm", "tinker", "tinker_cookbook", "torch", "transformers"]
    code = f"import sys, rolloutgym_tinker.plugin; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
