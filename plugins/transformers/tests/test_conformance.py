"""The policy conformance kit, run against ``hf:tiny``."""

from __future__ import annotations

from rolloutgym_testing import PolicyConformanceTests
from rolloutgym_transformers import make_policy


class TestTinyTransformersPolicy(PolicyConformanceTests):
    def make_policy(self):
        return make_policy("tiny", max_tokens=16, device="cpu", threads=1)
