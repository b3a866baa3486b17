"""The sandbox contract's door: providers found by name (hook or in-process), limits checked, build digests."""

from __future__ import annotations

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.sandboxes import (
    BuildContext,
    ResourceLimits,
    SandboxInfraError,
    SandboxProvider,
    SandboxUnsupported,
    StageTimes,
    available_providers,
    get_provider,
    register_provider,
)
from rolloutgym_protocol import SandboxProviderSpec
from rolloutgym_protocol.errors import SpecError


def test_the_core_registers_the_docker_provider_through_the_hook():
    specs = get_registry().sandbox_specs()
    assert specs["docker"].spec.entry_point == "rolloutgym.sandboxes.docker:DockerProvider"
    assert "docker" in available_providers()


def test_an_unknown_provider_names_the_ones_there_are():
    with pytest.raises(SandboxInfraError, match=r"no sandbox provider 'dockr'\. Did you mean 'docker'.*Available:"):
        get_provider("dockr")


def test_a_provider_registered_in_process_is_built_with_its_options_and_checked():
    class Refusing(SandboxProvider):
        name = "refusing"

        def __init__(self, reason: str) -> None:
            self.reason = reason

        def check(self) -> None:
            raise SandboxInfraError(self.reason)

        def create(self, **options):  # type: ignore[override]
            raise AssertionError("never reached")

    register_provider("refusing", Refusing)
    with pytest.raises(SandboxInfraError, match="the engine is down"):
        get_provider("refusing", reason="the engine is down")
    provider = Refusing("x")
    assert get_provider(provider) is provider
    with pytest.raises(SandboxUnsupported, match="cannot build"):
        provider.build(BuildContext("."))  # type: ignore[arg-type]


def test_limits_and_specs_refuse_nonsense():
    with pytest.raises(ValueError, match="ResourceLimits.pids must be positive"):
        ResourceLimits(pids=0)
    with pytest.raises(SpecError, match="sandbox provider name"):
        SandboxProviderSpec(name="Docker!", entry_point="a.b:c")
    with pytest.raises(SpecError, match="entry point"):
        SandboxProviderSpec(name="docker", entry_point="not an entry point")


def test_a_build_context_digest_follows_its_content_and_image_map(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\n")
    (tmp_path / "app.py").write_text("print(1)\n")
    first = BuildContext(tmp_path).digest()
    assert BuildContext(tmp_path).digest() == first
    assert BuildContext(tmp_path, image_map={"python:3.11-slim": "localhost/base"}).digest() != first
    (tmp_path / "app.py").write_text("print(2)\n")
    assert BuildContext(tmp_path).digest() != first


def test_stage_times_add_up_per_stage():
    stages = StageTimes()
    with stages.measure("create"):
        pass
    with pytest.raises(RuntimeError), stages.measure("start"):
        raise RuntimeError("a failed start is timed too")
    assert set(stages) == {"create", "start"} and all(value >= 0 for value in stages.values())
