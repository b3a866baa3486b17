"""``rg.run(policy=OBJECT)`` records the policy's own name in the run header (never the default "oracle"): a
function's name, a ``name`` attribute, a class's name; ``policy_object=`` with a ``policy=`` string keeps that
string."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym.builtin.policies import NullPolicy


def always_five(observation, info=None):
    return "5"


class Named:
    name = "my-agent"

    def __call__(self, observation, info=None):
        return "5"


class Anonymous:
    def __call__(self, observation, info=None):
        return "5"


@pytest.mark.parametrize(
    ("policy", "recorded"),
    [(always_five, "always_five"), (Named(), "my-agent"), (Anonymous(), "Anonymous"), (NullPolicy(), None)],
)
def test_the_header_names_the_policy_object(policy, recorded) -> None:
    result = rg.run("toy/arith-v0", policy=policy, limit=1, out=None)
    assert result.header["policy"] != "oracle"
    if recorded is not None:
        assert result.header["policy"] == recorded


def test_policy_object_with_a_name_keeps_the_name() -> None:
    result = rg.run("toy/arith-v0", policy="mine", policy_object=always_five, limit=1, out=None)
    assert result.header["policy"] == "mine"
