"""The conformance kit on workflow/refund-v0: oracle 1.0 and null 0.0 on every task, API, seeding, leaks."""

from rolloutgym_testing import EnvConformanceTests


class TestRefundConformance(EnvConformanceTests):
    env_id = "workflow/refund-v0"


class TestRefundConversationConformance(EnvConformanceTests):
    env_id = "workflow/refund-conv-v0"
