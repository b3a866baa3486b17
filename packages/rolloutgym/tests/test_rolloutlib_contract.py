"""The rolloutlib 0.2.0 contract, name by name: every public name of every rolloutlib module
imports from the same rolloutgym module, and every class rolloutlib declares generic is
generic here with the same number of type parameters.

The reference list (``data/rolloutlib_0_2_0_api.json``) was taken from the rolloutlib 0.2.0
wheel on PyPI: each module's ``__all__`` (or the names it defines) and each generic class's
``__parameters__``. When rolloutlib itself is installed, the test also compares against it live.
"""

from __future__ import annotations

import importlib
import json
import typing
from pathlib import Path

import pytest

API = json.loads((Path(__file__).parent / "data" / "rolloutlib_0_2_0_api.json").read_text())


def _ours(module: str) -> str:
    return "rolloutgym" + module[len("rolloutlib") :]


@pytest.mark.parametrize("module", sorted(API["modules"]))
def test_every_rolloutlib_module_and_name_imports_from_rolloutgym(module: str) -> None:
    ours = importlib.import_module(_ours(module))
    missing = [name for name in API["modules"][module] if not hasattr(ours, name)]
    assert not missing, f"{_ours(module)} lacks {missing}"


@pytest.mark.parametrize("path", sorted(API["generics"]))
def test_generic_classes_keep_their_type_parameters(path: str) -> None:
    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(_ours(module)), name)
    count = API["generics"][path]
    arguments = tuple(typing.Any for _ in range(count))
    alias = cls[arguments if count > 1 else arguments[0]]
    assert typing.get_origin(alias) is cls or getattr(alias, "__origin__", None) is cls
    assert len(getattr(cls, "__parameters__", ())) == count


def test_the_reference_list_matches_an_installed_rolloutlib() -> None:
    rolloutlib = pytest.importorskip(
        "rolloutlib", reason="rolloutlib is not installed: the shipped list is the reference"
    )
    assert getattr(rolloutlib, "__version__", "0.2.0").startswith("0.2.")
    for module, names in API["modules"].items():
        reference = importlib.import_module(module)
        assert set(names) <= set(dir(reference)), module


def test_step_policy_info_keeps_the_sampling_fields() -> None:
    """rolloutlib copied tokens, logprobs and stop_reason into Step.policy_info; they stay there."""
    from rolloutgym import PolicyOutput, rollout
    from rolloutgym.registry import get_registry

    env = get_registry().make("toy/arith-v0", task=0)
    answer = env.unwrapped.oracle_action()

    def policy(observation: typing.Any) -> PolicyOutput:
        return PolicyOutput(answer, tokens=(1, 2, 3), logprobs=(-0.1, -0.2, -0.3), stop_reason="stop")

    step = rollout(env, policy, seed=0).steps[0]
    assert step.policy_tokens == (1, 2, 3)
    assert tuple(step.policy_info["tokens"]) == (1, 2, 3)
    assert tuple(step.policy_info["logprobs"]) == (-0.1, -0.2, -0.3)
    assert step.policy_info["stop_reason"] == "stop"
