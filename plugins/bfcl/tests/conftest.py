"""BFCL's own checkers and loaders, loaded as references for the cross-check tests.

``bfcl_eval.utils`` creates ``result/``, ``score/`` and lock folders under
``BFCL_PROJECT_ROOT`` (default: next to the installed package) when imported; the tests
point it at a temporary folder first.

``bfcl_eval.eval_checker.ast_eval.ast_checker`` imports ``bfcl_eval.constants.model_config``
(BFCL's model registry), which imports the inference SDK of every vendor BFCL supports
(anthropic, cohere, mistralai, google-genai, qwen-agent, ... hundreds of MB). The checker
reads exactly one thing from that registry: whether the model's function names have their
dots replaced by underscores (``underscore_to_dot``), which is true for every OpenAI-style
function-calling model. The fixture below gives the checker a registry with one such model
while importing it, then removes both modules from ``sys.modules``; the checker code that
runs is the package's, unmodified.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import sys
import tempfile
import types
from typing import Any

import pytest

REFERENCE_MODEL = "rolloutgym_fc"  # BFCL looks it up as "rolloutgym/fc"

if "BFCL_PROJECT_ROOT" not in os.environ:
    _ROOT = tempfile.mkdtemp(prefix="rolloutgym-bfcl-reference-")
    os.environ["BFCL_PROJECT_ROOT"] = _ROOT
    atexit.register(shutil.rmtree, _ROOT, True)


@pytest.fixture(scope="session")
def reference_ast_checker() -> Any:
    """The package's ``ast_checker`` module (see the module docstring)."""
    registry_name = "bfcl_eval.constants.model_config"
    checker_name = "bfcl_eval.eval_checker.ast_eval.ast_checker"
    saved = {name: sys.modules.get(name) for name in (registry_name, checker_name)}
    registry = types.ModuleType(registry_name)
    registry.MODEL_CONFIG_MAPPING = {REFERENCE_MODEL.replace("_", "/"): types.SimpleNamespace(underscore_to_dot=True)}  # type: ignore[attr-defined]
    sys.modules[registry_name] = registry
    try:
        module = importlib.import_module(checker_name)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    module.REFERENCE_MODEL_NAME = REFERENCE_MODEL  # the name to pass as model_name
    return module


@pytest.fixture(scope="session")
def reference_model() -> str:
    """The model name the reference checkers are called with."""
    return REFERENCE_MODEL


@pytest.fixture(scope="session")
def reference_utils() -> Any:
    """``bfcl_eval.utils`` (loaders, output-format rules), with its folders in a temp dir."""
    return importlib.import_module("bfcl_eval.utils")


@pytest.fixture(scope="session")
def reference_multi_turn() -> Any:
    """``bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker``."""
    return importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
