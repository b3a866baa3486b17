"""The platform's whole loop against a real ``rolloutgym platform serve`` (2 worker processes) on 127.0.0.1, on
SQLite and on PostgreSQL: login, push (content-hash versions), remote runs, show/compare of remote ids, improve
(hf:tiny SFT, a few steps), a run with the trained model (``--policy job:ID``), jobs/job through the CLI (SQLite);
the same loop through ``Client`` (PostgreSQL), training on the chosen rollouts only; errors, scopes and orgs on
both databases."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
import time
from pathlib import Path

import pytest
from rolloutgym.cli import main

EXAMPLE = Path(__file__).parents[3] / "examples" / "refund_agent.py"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_cli_loop_push_run_improve_run_compare(platform_server, user_home, tmp_path, capsys) -> None:
    code, out, _ = cli(capsys, "login", platform_server.url, "--key", platform_server.keys["all"])
    assert code == 0 and "org acme" in out
    credentials = user_home / ".config" / "rolloutgym" / "credentials"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert json.loads(credentials.read_text())["endpoints"][platform_server.url]["api_key"].startswith("rk_")

    env_file = tmp_path / "refund_agent.py"
    shutil.copy(EXAMPLE, env_file)
    code, out, _ = cli(capsys, "push", str(env_file))
    assert code == 0 and "refund-agent: new version" in out
    first = re.search(r"version (\w+)", out).group(1)
    code, out, _ = cli(capsys, "push", str(env_file))
    assert f"unchanged, version {first}" in out
    env_file.write_text(env_file.read_text() + "\n# edited\n")
    code, out, _ = cli(capsys, "push", str(env_file))
    assert "new version" in out and first not in out
    assert cli(capsys, "push", "toy/arith-v0")[0] == 0
    code, out, _ = cli(capsys, "envs", "--remote")
    assert (
        "refund-agent" in out
        and "toy/arith-v0" in out
        and re.search(r"refund-agent\s+│\s+\w+\s+│\s+python\s+│\s+2", out)
    )

    code, out, _ = cli(capsys, "run", "refund-agent", "--remote", "-n", "2")
    assert code == 0 and "succeeded: 2 trajectories, pass rate 100.0%" in out
    code, out, _ = cli(capsys, "run", "toy/arith-v0", "--remote", "-n", "2", "--limit", "3", "--policy", "null")
    assert code == 0 and "pass rate 0.0%" in out, out
    baseline = re.search(r"run (run_\w+) succeeded", out).group(1)
    code, out, _ = cli(capsys, "runs", "--remote")
    assert baseline in out and "refund-agent" in out
    code, out, _ = cli(capsys, "show", baseline)
    assert code == 0 and "toy/arith-v0" in out and "6 trajectories" in out
    code, out, _ = cli(capsys, "report", baseline)  # remote ids: downloaded on demand, written here
    assert code == 0 and (tmp_path / f"{baseline}.html").is_file()
    code, out, _ = cli(capsys, "export", baseline)
    assert code == 0 and len((tmp_path / f"{baseline}.trajectories.jsonl").read_text().splitlines()) == 6

    code, out, _ = cli(capsys, "run", "toy/arith-v0", "--remote", "-n", "2", "--limit", "3")  # oracle: all pass
    oracle = re.search(r"run (run_\w+) succeeded", out).group(1)
    code, out, _ = cli(
        capsys, "improve", "--run", oracle, "--model", "hf:tiny", "--steps", "2", "--suffix", "v1", "--wait"
    )
    assert code == 0, out
    job = re.search(r"job (job_\w+): succeeded", out).group(1)
    assert "loss by step" in out and f"--policy job:{job}" in out
    code, out, _ = cli(capsys, "jobs")
    assert job in out and "succeeded" in out
    code, out, _ = cli(capsys, "job", job)
    assert "succeeded" in out and '"step": 2' in out
    from rolloutgym import Client

    with Client() as remote:
        assert remote.get_job(job)["result"]["steps"] == 2  # optimizer steps, from the training log's step lines

    code, out, _ = cli(
        capsys, "run", "toy/arith-v0", "--remote", "-n", "2", "--limit", "3", "--policy", f"job:{job}",
        "--policy-arg", "max_tokens=8",
    )  # fmt: skip
    assert code == 0, out
    improved = re.search(r"run (run_\w+) succeeded", out).group(1)
    code, out, _ = cli(capsys, "compare", baseline, improved)
    assert code == 0 and "arith-00" in out and "overall pass rate" in out


def test_cli_errors_are_one_line(platform_server, user_home, tmp_path, capsys, monkeypatch) -> None:
    code, _, err = cli(capsys, "runs", "--remote")
    assert code == 2 and "no API key" in err and "rolloutgym login" in err
    monkeypatch.setenv("ROLLOUTGYM_ENDPOINT", platform_server.url)
    monkeypatch.setenv("ROLLOUTGYM_API_KEY", platform_server.keys["run_only"])
    code, _, err = cli(capsys, "push", "toy/arith-v0")
    assert code == 2 and "lacks the 'push' scope" in err
    code, _, err = cli(capsys, "run", "no-such-env", "--remote")
    assert code == 2 and "no env 'no-such-env' pushed" in err
    code, _, err = cli(capsys, "job", "job_000000000000")
    assert code == 2 and "no job 'job_000000000000'" in err
    code, _, err = cli(capsys, "show", "run_000000000000")
    assert code == 2 and "no run 'run_000000000000'" in err
    monkeypatch.setenv("ROLLOUTGYM_API_KEY", "rk_wrong")
    code, _, err = cli(capsys, "runs", "--remote")
    assert code == 2 and "not valid" in err


def test_env_file_is_imported_only_by_workers_and_its_error_is_shown(platform_server, tmp_path, wait) -> None:
    from rolloutgym import Client

    marker = tmp_path / "imported-by.txt"
    env_file = tmp_path / "broken_env.py"
    env_file.write_text(
        f"import os\nopen({str(marker)!r}, 'a').write('imported')  # a host path: never there for the importer\n"
    )
    pushed = tmp_path / "pushed"
    pushed.mkdir()
    (pushed / "broken_env.py").write_text(
        "import os\nraise RuntimeError(f'the env file is broken on purpose (uid {os.getuid()})')\n"
    )
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        assert client.push(env_file)["slug"] == "broken_env"
        assert not marker.exists()  # pushing stored it; nothing imported it
        run = wait(client, client.create_run(env_slug="broken_env", model="oracle", n=1)["runId"])
        assert run["state"] == "failed" and not marker.exists()  # imported where the host's files are not
        assert client.push(pushed / "broken_env.py")["slug"] == "broken_env"
        run = wait(client, client.create_run(env_slug="broken_env", model="oracle", n=1)["runId"])
    assert run["state"] == "failed"
    assert "broken_env.py:2" in run["error"] and "broken on purpose" in run["error"], run["error"]
    # imported by a worker's sandbox as an unprivileged uid: not in the API process, not with its rights
    uid = int(run["error"].rsplit("(uid ", 1)[1].split(")")[0])
    assert uid != os.getuid() or os.getuid() != 0


def test_client_by_the_sdk_names_and_orgs(platform_server, wait, tmp_path) -> None:
    from rolloutgym import Client

    client = Client(platform_server.url, platform_server.keys["all"])
    other = Client(platform_server.url, platform_server.keys["other_org"])
    runner = Client(platform_server.url, platform_server.keys["run_only"])
    with client, other, runner:
        _sdk_calls(client, other, runner, wait, tmp_path)


def _sdk_calls(client, other, runner, wait, tmp_path) -> None:
    from rolloutgym import AsyncClient
    from rolloutgym.platform import ResourceNotFound, ScopeError

    client.push("toy/arith-v0")
    run = client.create_run(env_slug="toy/arith-v0", model="oracle", n=3, limit=2)
    finished = wait(client, run["runId"])
    assert finished["state"] == "succeeded" and finished["trajectories"] == 6 and finished["passRate"] == 1.0
    assert run["runId"] in [item["runId"] for item in client.list_runs()]
    ids = client.passing_rollout_ids(run["runId"])
    assert sorted(ids) == sorted(f"{task}:{member}" for task in range(2) for member in range(3))

    with pytest.raises(ResourceNotFound):
        other.get_run(run["runId"])
    with pytest.raises(ResourceNotFound):
        other.passing_rollout_ids(run["runId"])
    with pytest.raises(ResourceNotFound):
        other.create_training_job(source_run_id=run["runId"], rollout_ids=ids, base_model="hf:tiny", method="sft")
    assert run["runId"] not in [item["runId"] for item in other.list_runs()]
    with pytest.raises(ScopeError):
        runner.create_training_job(source_run_id=run["runId"], rollout_ids=ids, base_model="hf:tiny", method="sft")

    async def twin() -> None:
        async with AsyncClient(client.endpoint, client._api_key) as remote:
            assert (await remote.get_run(run["runId"]))["state"] == "succeeded"
            assert sorted(await remote.passing_rollout_ids(run["runId"])) == sorted(ids)
            assert any(env["slug"] == "toy/arith-v0" for env in await remote.list_envs())
            downloaded = await remote.download_run(run["runId"], tmp_path / "twin.jsonl")
            assert downloaded.read_bytes() == client.download_run(run["runId"], tmp_path / "sync.jsonl").read_bytes()
            lines = [line async for line in remote.follow_run("toy/arith-v0", "oracle", 1, limit=2)]
            assert lines[0]["state"] == "queued" and lines[-1]["state"] == "succeeded" and lines[-1]["done"] == 2

    asyncio.run(twin())


@pytest.mark.parametrize("platform_server", ["postgresql"], indirect=True)
def test_client_loop_trains_on_the_chosen_rollouts(platform_server, user_home, wait, capsys, monkeypatch) -> None:
    from rolloutgym import Client
    from rolloutgym.platform import PlatformError

    with Client(platform_server.url, platform_server.keys["all"]) as client:
        client.push("toy/arith-v0")
        baseline = wait(client, client.create_run(env_slug="toy/arith-v0", model="null", n=1, limit=3)["runId"])
        source = wait(client, client.create_run(env_slug="toy/arith-v0", model="oracle", n=2, limit=3)["runId"])
        ids = client.passing_rollout_ids(source["runId"])
        assert len(ids) == 6
        with pytest.raises(PlatformError, match="has no rollout 9:0"):
            client.create_training_job(source_run_id=source["runId"], rollout_ids=["9:0"], base_model="hf:tiny")
        chosen = ["0:1", "2:0"]
        job = client.create_training_job(
            source_run_id=source["runId"], rollout_ids=chosen, base_model="hf:tiny", method="sft", suffix="v1", steps=1
        )
        while job["state"] in ("queued", "running"):
            time.sleep(0.5)
            job = client.get_job(job["id"])
        assert job["state"] == "succeeded", job
        assert job["result"]["examples"] == 2 and job["result"]["steps"] == 1 and job["rolloutIds"] == chosen
        selected = platform_server.data / "models" / "acme" / job["id"] / "rollouts.jsonl"
        groups = [json.loads(line) for line in selected.read_text().splitlines()[1:]]
        assert [(group["task_index"], len(group["trajectories"])) for group in groups] == [(0, 1), (2, 1)]
        improved = client.create_run(
            env_slug="toy/arith-v0", model=f"job:{job['id']}", n=1, limit=3, policy_options={"max_tokens": 8}
        )
        improved = wait(client, improved["runId"])
        assert improved["state"] == "succeeded" and improved["policy"] == f"job:{job['id']}"
    monkeypatch.setenv("ROLLOUTGYM_ENDPOINT", platform_server.url)
    monkeypatch.setenv("ROLLOUTGYM_API_KEY", platform_server.keys["all"])
    code, out, _ = cli(capsys, "compare", baseline["runId"], improved["runId"])
    assert code == 0 and "arith-00" in out and "overall pass rate" in out
    _pages_in_chromium(platform_server, source["runId"], job["id"])


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def _pages_in_chromium(server, run_id: str, job_id: str) -> None:
    """The read-only pages in real Chromium: a key once by ?key= (kept in a cookie), envs and versions, runs and
    a run's report, jobs and a job's curves; no key: 401; another organisation's run or job: 404."""
    import importlib.util
    import os

    if importlib.util.find_spec("playwright") is None or not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("the platform's pages test needs Playwright and /usr/bin/chromium under CI")
        pytest.skip("Playwright or /usr/bin/chromium is missing")
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.on("pageerror", lambda error: problems.append(str(error)))
        assert page.goto(f"{server.url}/runs").status == 401 and "?key=" in page.locator("#error").inner_text()
        answer = page.goto(f"{server.url}/?key={server.keys['all']}")
        assert answer.status == 200 and page.url == f"{server.url}/runs"  # the key went into a cookie, not the URL
        page.goto(f"{server.url}/envs")
        page.locator("#envs a", has_text="toy/arith-v0").click()
        assert page.locator("#versions tbody tr").count() == 1 and page.locator(f"#runs a:text('{run_id}')").count()
        page.goto(f"{server.url}/runs")
        page.locator(f"#runs a:text('{run_id}')").click()
        page.locator("#run-0").wait_for(state="visible")  # the run's HTML report
        page.goto(f"{server.url}/jobs")
        page.locator(f"#jobs a:text('{job_id}')").click()
        # its training curves: the report's script draws each figure's svg after the page has loaded (is_visible()
        # does not wait; CI once looked before the script had run)
        page.locator('#training figure[data-metric="loss"] svg').wait_for(state="visible", timeout=30_000)
        other = browser.new_page()
        other.goto(f"{server.url}/runs?key={server.keys['other_org']}")
        assert other.locator(f"a:text('{run_id}')").count() == 0
        assert other.goto(f"{server.url}/runs/{run_id}").status == 404
        assert other.goto(f"{server.url}/jobs/{job_id}").status == 404
        assert other.goto(f"{server.url}/envs/toy/arith-v0").status == 404  # it pushed none
        browser.close()
    assert not problems, problems
