"""rolloutgym-testing: the conformance kit every environment and policy plugin subclasses.

.. code-block:: python

    # tests/test_conformance.py of a plugin
    from rolloutgym_testing import EnvConformanceTests

    class TestShop(EnvConformanceTests):
        env_id = "sql/shop-v0"
"""

from rolloutgym_protocol import check_async_env, check_env

from ._leaks import LeakSnapshot
from .check_plugin import assert_env_passes
from .env_conformance import EnvConformanceTests, run_episode
from .huge_numbers import huge_number_actions, play_huge_number_actions
from .policy_conformance import PolicyConformanceTests

__all__ = [
    "EnvConformanceTests",
    "LeakSnapshot",
    "assert_env_passes",
    "PolicyConformanceTests",
    "check_async_env",
    "check_env",
    "huge_number_actions",
    "play_huge_number_actions",
    "run_episode",
]
