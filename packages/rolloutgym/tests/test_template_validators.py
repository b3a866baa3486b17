"""Template config shapes belong to the template's plugin: ``TemplateSpec.validator``, called through the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from rolloutgym.declarative import EnvFileError, Environment, validate_config
from rolloutgym.declarative.shapes import join_errors, template_validator
from rolloutgym.registry import Registry
from rolloutgym_protocol import TemplateSpec, hookimpl
from rolloutgym_protocol.errors import SpecError

# A third party's template module: a compiler and a validator written with the core's helpers.
DICE_TEMPLATE = """
from pydantic import BaseModel, ConfigDict, Field
from rolloutgym.declarative.shapes import join_errors, validate_model
from rolloutgym_protocol.errors import EnvFileError

class DiceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sides: int = Field(ge=2)

def validate(config, prefix):
    _, errors = validate_model(DiceConfig, config, prefix)
    if errors:
        raise EnvFileError(join_errors(errors))
    return dict(config)

def compile_dice(environment):
    raise NotImplementedError
"""


class DicePlugin:
    @hookimpl
    def rolloutgym_templates(self):
        return [
            TemplateSpec("dice", "dice_template_for_tests:compile_dice", validator="dice_template_for_tests:validate")
        ]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    (tmp_path / "dice_template_for_tests.py").write_text(DICE_TEMPLATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(load_entry_points=False)
    registry.register(DicePlugin(), name="dice-test")
    return registry


def test_the_plugins_validator_checks_the_config(registry: Registry):
    assert validate_config("dice", {"sides": 6}, registry=registry) == {"sides": 6}
    with pytest.raises(EnvFileError) as caught:
        validate_config("dice", {"sides": 1, "colour": "red"}, registry=registry)
    assert str(caught.value) == (
        "2 problems:\n  config.sides: Input should be greater than or equal to 2\n"
        "  config.colour: unknown field 'colour'. Known fields: sides."
    )
    with pytest.raises(EnvFileError, match=r"^env\.config\.sides: required field is missing$"):
        validate_config("dice", {}, prefix="env.config", registry=registry)


def test_environment_validate_uses_the_given_registry(registry: Registry):
    # The global registry does not know 'dice': building the Environment checks only that config is an object.
    environment = Environment(slug="d", name="Dice", template="dice", config={"sides": 1})
    with pytest.raises(EnvFileError, match=r"config\.sides: Input should be greater than or equal to 2"):
        environment.validate(registry=registry)


def test_a_template_without_validator_or_plugin_is_only_checked_to_be_an_object():
    bare = Registry(load_entry_points=False)
    # The core holds no template's shape: without the workflow plugin, a broken workflow config is not judged here.
    assert validate_config("workflow", {"tools": "not a list"}, registry=bare) == {"tools": "not a list"}
    assert template_validator("workflow", registry=bare) is None
    with pytest.raises(EnvFileError, match=r"^config: the workflow template needs a JSON object, got list$"):
        validate_config("workflow", [1], registry=bare)


def test_validator_entry_point_is_checked_like_the_others():
    assert TemplateSpec("t", "m:compile").validator is None
    with pytest.raises(SpecError, match="entry point 'not an entry point' must look like 'package.module:attribute'"):
        TemplateSpec("t", "m:compile", validator="not an entry point")


def test_join_errors():
    assert join_errors(["a: b"]) == "a: b"
    assert join_errors(["a: b", "c: d"]) == "2 problems:\n  a: b\n  c: d"
