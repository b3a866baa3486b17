"""The conformance kit on both registered benchmark environments (every shipped sample task)."""

from rolloutgym_testing import EnvConformanceTests


class TestGSM8K(EnvConformanceTests):
    env_id = "bench/gsm8k-v0"


class TestAIME(EnvConformanceTests):
    env_id = "bench/aime-v0"
