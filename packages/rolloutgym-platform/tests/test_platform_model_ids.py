"""Model ids of the rollout SDK README's form at submit: ``openai/gpt-4o-mini`` (and its dated variant) is read as
``openai:gpt-4o-mini``; a provider that is not installed (``together/...``), a bare ``Org/Model``, a provider
without its model, or an unknown name is refused when the run is created (400 naming the accepted forms), never
queued to fail on a worker. The same reading applies to a local ``rolloutgym run``."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym import Client
from rolloutgym.platform.errors import PlatformError
from rolloutgym_protocol.errors import ConfigError, PolicyNotFound

pytest.importorskip("rolloutgym_openai", reason="the openai provider comes from rolloutgym-openai")

TRANSLATED = {
    "openai/gpt-4o-mini": "openai:gpt-4o-mini",
    "openai/gpt-4o-mini-2024-07-18": "openai:gpt-4o-mini-2024-07-18",
    "openai/ft:gpt-4o-mini:org::abc": "openai:ft:gpt-4o-mini:org::abc",
    "hf/Org/Model": "hf:Org/Model",
}
REFUSED = {
    "together/deepseek-ai/DeepSeek-V3.1": "no policy provider 'together'",
    "anthropic/claude-3-5-sonnet": "no policy provider 'anthropic'",
    "Qwen/Qwen2.5-0.5B-Instruct": "write hf:Qwen/Qwen2.5-0.5B-Instruct",
    "openai": "needs a model",
    "gpt-4o-mini": "no policy provider 'gpt-4o-mini'",
}


@pytest.mark.parametrize(("given", "read"), [*TRANSLATED.items(), ("oracle", "oracle"), ("hf:tiny", "hf:tiny")])
def test_the_registry_reads_the_seed_form(given: str, read: str) -> None:
    assert rg.get_registry().policy_reference(given) == read


@pytest.mark.parametrize(("given", "problem"), REFUSED.items())
def test_the_registry_refuses_with_the_accepted_forms(given: str, problem: str) -> None:
    with pytest.raises((PolicyNotFound, ConfigError)) as caught:
        rg.get_registry().policy_reference(given)
    assert problem in str(caught.value)
    if "/" in given:
        assert "Accepted forms: PROVIDER:MODEL" in str(caught.value)


def test_a_local_run_reads_the_seed_form(tmp_path) -> None:
    """The translation reaches the policy provider: the openai policy is built for gpt-4o-mini (and needs a
    key or a base URL here, which it names), not refused as an unknown provider."""
    with pytest.raises(Exception) as caught:
        rg.run("toy/guess-v0", policy="openai/gpt-4o-mini", out=None, limit=1)
    assert "no policy provider" not in str(caught.value)


def test_submit_translates_or_refuses(platform_server) -> None:
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        client.push("toy/arith-v0")
        for given, read in TRANSLATED.items():
            if given.count(":") > 1:
                continue  # an OpenAI fine-tune id: the platform takes model names only (trust.py)
            run = client.create_run(env_slug="toy/arith-v0", model=given, n=1, limit=1)
            assert run["model"] == run["policy"] == read
        for given, problem in REFUSED.items():
            with pytest.raises(PlatformError) as caught:
                client.create_run(env_slug="toy/arith-v0", model=given, n=1, limit=1)
            assert caught.value.status == 400 and (
                "Accepted forms" in str(caught.value) or "openai:" in str(caught.value)
            )
            if "/" in given:  # the seed's form: the registry's refusal, naming the accepted forms
                assert problem in str(caught.value) and "Accepted forms" in str(caught.value), str(caught.value)
                assert str(caught.value).startswith("model '")  # what is wrong comes first, nothing cut at front
        listed = [run["policy"] for run in client.list_runs()]
        assert not any(policy in REFUSED for policy in listed)  # nothing refused was queued
