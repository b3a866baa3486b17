"""Issue 40's platform frictions: ``login`` with no URL uses the saved endpoint and checks it answers before
asking for a key; ``runs --remote`` says why a run failed (no server data path in it); a pushed slug used without
``--remote`` gets the hint."""

from __future__ import annotations

import pytest
from rolloutgym import Client
from rolloutgym.cli import main
from rolloutgym_testing.http_server import LocalHTTPServer

from .conftest import free_port


def cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def _html_page(method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "text/html"}, b"<html>a proxy's page</html>"


@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_login_without_a_url_uses_the_saved_endpoint(platform_server, user_home, capsys, monkeypatch) -> None:
    key = platform_server.keys["all"]
    assert cli(capsys, "login", platform_server.url, "--key", key)[0] == 0
    code, out = cli(capsys, "login", "--key", key)  # no URL: the saved one, not the default
    assert code == 0 and f"saved credentials for {platform_server.url}" in out, out
    monkeypatch.setenv("ROLLOUT_ENDPOINT", platform_server.url)  # the seed's spelling of the endpoint
    assert cli(capsys, "login", "--key", key)[0] == 0


@pytest.mark.parametrize("where", ["dead port", "html page", "saved but dead"])
def test_login_checks_the_endpoint_before_asking_for_the_key(user_home, capsys, monkeypatch, where) -> None:
    def no_prompt(*args, **kwargs):
        raise AssertionError("asked for a key before checking the endpoint")

    monkeypatch.setattr("typer.prompt", no_prompt)
    page = LocalHTTPServer(_html_page)
    page.start()
    try:
        dead = f"http://127.0.0.1:{free_port()}"
        if where == "saved but dead":
            from rolloutgym.platform import credentials

            credentials.save(dead, "rk_old")
            code, out = cli(capsys, "login")
        else:
            code, out = cli(capsys, "login", dead if where == "dead port" else f"http://127.0.0.1:{page.port}")
    finally:
        page.stop()
    assert code == 2
    if where == "html page":
        assert "not as a rolloutgym platform" in out, out
    else:
        assert f"cannot reach a platform at {dead}" in out and "rolloutgym platform serve" in out, out


@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_runs_remote_says_why_a_run_failed(platform_server, user_home, capsys, wait) -> None:
    assert cli(capsys, "login", platform_server.url, "--key", platform_server.keys["all"])[0] == 0
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        client.push("toy/arith-v0")
        failed = wait(client, client.create_run("toy/arith-v0", "openai:gpt-4o-mini", n=1, limit=1)["runId"])
    assert failed["state"] == "failed" and failed["error"], failed
    code, out = cli(capsys, "runs", "--remote")
    assert code == 0
    assert f"{failed['id']} failed: " in out and failed["error"][:40] in " ".join(out.split()), out
    assert str(platform_server.data.resolve()) not in out


def test_a_slug_without_remote_gets_the_hint(capsys) -> None:
    code, out = cli(capsys, "run", "refund-agent", "-q")
    assert code == 2 and "rolloutgym run refund-agent --remote" in " ".join(out.split())
    code, out = cli(capsys, "run", "toy/nonesuch-v0", "-q")
    assert code == 2 and "--remote" not in out  # an id with a namespace is no slug


@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_run_remote_takes_timeout_and_pass_threshold_as_run_does(platform_server, user_home, capsys) -> None:
    """Issue 46: ``run --remote`` refused ``--timeout``/``--pass-threshold`` that the API accepts; the worker applies
    them (the oracle's 1.0 is no pass at a threshold of 2)."""
    assert cli(capsys, "login", platform_server.url, "--key", platform_server.keys["all"])[0] == 0
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        client.push("toy/arith-v0")
    command = ["run", "toy/arith-v0", "--remote", "--limit", "2", "-q", "--timeout", "60"]
    code, out = cli(capsys, *command, "--pass-threshold", "2")
    assert code == 0 and "pass rate 0.0%" in out, out
    code, out = cli(capsys, *command, "--pass-threshold=0.5")
    assert code == 0 and "pass rate 100.0%" in out, out
    code, out = cli(capsys, *command, "--timeout", "-1")
    assert code != 0 and "timeout" in out and "Traceback" not in out, out
