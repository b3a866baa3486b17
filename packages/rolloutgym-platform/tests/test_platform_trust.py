"""The platform's threat model, on a real platform (SQLite, then PostgreSQL): what a key's scopes let a worker
execute, and which files a request can reach.

* A ``run`` key chooses only vetted policies (built-ins that run no code, model providers by model *name*,
  ``job:ID``, ``replay:RUN_ID``) over envs that run no code; every route to code on a worker answers 403 naming
  the ``push`` scope, and nothing is queued.
* Policies refer to files only through ids the organisation owns: paths (``replay:PATH``, ``hf:PATH``) are
  refused for every key, and another organisation's run answers 404.
* The worker checks again: a row that asks for code without having been queued by a ``push`` key fails, and
  the code is not run.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import httpx
import pytest

EXAMPLE = Path(__file__).parents[3] / "examples" / "refund_agent.py"

CODE_POLICIES = [
    ("harness:command", None),
    ("harness:claude", {"command": "sh -c 'id > /tmp/pwned'"}),
    ("harness:command", {"command": "true", "model": "hf:tiny"}),
    ("hf:tiny", {"trust_remote_code": True}),
    ("hf:tiny", {"chat_template": "{{ cycler.__init__.__globals__ }}"}),
    ("hf:tiny", {"device": "cuda"}),
    ("openai:gpt-4o-mini", {"base_url": "http://169.254.169.254/latest"}),
    ("openai:gpt-4o-mini", {"headers": {"x": "y"}}),
    ("openai:gpt-4o-mini", {"api_key": "sk-elsewhere"}),
    ("vllm:Qwen/Qwen3-0.6B", {"engine_args": {"trust_remote_code": True}}),
    ("vllm:Qwen/Qwen3-0.6B", {"tokenizer": "/etc"}),
    ("tinker:Qwen/Qwen3-8B", {"model_path": "tinker://elsewhere"}),
    ("oracle", {"extra_body": {}}),
]

PATH_POLICIES = [
    "replay:/etc/passwd",
    "replay:../runs/globex/run_0123456789ab.jsonl",
    "replay:runs/globex/run_0123456789ab.jsonl",
    "replay:run_0123456789ab/../x",
    "replay:",
    "job:../models/globex",
    "job:/tmp/x",
    "hf:/etc",
    "hf:../models/globex/job_0123456789ab/model",
    "hf:./local",
    "hf:~/.cache/huggingface",
    "hf:a/b/c",
    "hf:a/..",
    "hf:",
    "vllm:/models/x",
    "openai:../x",
    "tinker:/x",
    "human",
    "oracle oracle",
    "oracle\n",
    "<script>alert(1)</script>",
    "x" * 5000,
    "Oracle",
    ":oracle",
]


def _push_file(client: httpx.Client, name: str, files: dict[str, bytes], slug: str) -> dict:
    import base64

    body = {
        "kind": "file",
        "main": name,
        "slug": slug,
        "files": {k: base64.b64encode(v).decode() for k, v in files.items()},
    }
    answer = client.post("/api/envs", json=body)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def _data_env() -> dict:
    from rolloutgym.declarative import Environment

    namespace = runpy.run_path(str(EXAMPLE))
    environment = next(value for value in namespace.values() if isinstance(value, Environment))
    return environment.to_payload()


def _code_envs(marker: Path) -> dict[str, dict[str, bytes]]:
    """Pushed env versions whose loading runs code on a worker, by slug: each would write ``marker``."""
    touch = f"open({str(marker)!r}, 'a').write('ran\\n')"
    data = _data_env()
    stdio = {"command": ["python", "-c", touch]}
    return {
        "trust-py": {"env.py": f"{touch}\n".encode()},
        "trust-mcp-command": {"env.json": json.dumps(data | {"config": data["config"] | {"mcp": stdio}}).encode()},
        "trust-mcp-string": {"env.json": json.dumps(data | {"config": {"mcp": {"command": "sh -c id"}}}).encode()},
        "trust-mcp-url": {
            "env.json": json.dumps(data | {"config": {"mcp": {"url": "http://127.0.0.1:1/mcp"}}}).encode()
        },
        "trust-code-editing": {
            "env.json": json.dumps(
                {"slug": "c", "name": "c", "template": "code-editing", "config": {"files": {"a.py": "x"}}, "tasks": []}
            ).encode()
        },
        "trust-browser": {"env.json": json.dumps(data | {"template": "browser"}).encode()},
        "trust-harbor": {"env.json": json.dumps(data | {"template": "harbor"}).encode()},
        "trust-plugin-template": {"env.json": json.dumps(data | {"template": "someplugin"}).encode()},
        "trust-jsonl-line": {
            "env.jsonl": (json.dumps(data) + "\n" + json.dumps(data | {"config": {"mcp": stdio}}) + "\n").encode()
        },
        "trust-jsonl-companion": {
            "env.jsonl": (json.dumps({"instruction": "hi"}) + "\n").encode(),
            "env.py": f"{touch}\n".encode(),
        },
        "trust-json-with-py": {"env.json": json.dumps(data).encode(), "helpers.py": f"{touch}\n".encode()},
        "trust-sql-database": {
            "env.json": json.dumps(
                {"slug": "s", "name": "s", "template": "sql", "config": {"database": "/etc/passwd"}, "tasks": []}
            ).encode()
        },
        "trust-not-json": {"env.json": b"\xff\xfe not json"},
    }


@pytest.fixture(scope="module")
def pushed(platform_server, tmp_path_factory) -> dict:
    """The code-running env versions and one data env, pushed by the organisation's push key."""
    marker = tmp_path_factory.mktemp("trust") / "code-ran.txt"
    with httpx.Client(base_url=platform_server.url, headers=_auth(platform_server, "all"), timeout=60) as client:
        for slug, files in _code_envs(marker).items():
            _push_file(client, next(iter(files)), files, slug)
        _push_file(client, "refund.json", {"refund.json": json.dumps(_data_env()).encode()}, "trust-data")
        assert client.post("/api/envs", json={"kind": "id", "id": "toy/arith-v0"}).status_code in (200, 201)
    return {"marker": marker, "code": list(_code_envs(marker))}


def _auth(server, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.keys[name]}"}


def _runs(client: httpx.Client) -> int:
    return client.get("/api/stats").json()["runs"]


def test_a_run_key_cannot_choose_code(platform_server, pushed) -> None:
    with httpx.Client(base_url=platform_server.url, headers=_auth(platform_server, "run_only"), timeout=60) as client:
        before = _runs(client)
        for policy, options in CODE_POLICIES:
            body = {"env_slug": "toy/arith-v0", "model": policy, "n": 1, "limit": 1, "policy_options": options}
            answer = client.post("/api/runs", json=body)
            assert answer.status_code == 403, (policy, options, answer.text)
            assert "'push' scope" in answer.json()["error"], answer.text
        for policy in ("notaprovider:x", "workflow:x", "harnes:command"):  # not installed: refused, whatever the scope
            answer = client.post("/api/runs", json={"env_slug": "toy/arith-v0", "model": policy})
            assert answer.status_code in (400, 403), answer.text
        for slug in pushed["code"]:
            for policy in ("oracle", "null", "hf:tiny"):
                answer = client.post("/api/runs", json={"env_slug": slug, "model": policy, "limit": 1})
                assert answer.status_code == 403, (slug, policy, answer.text)
                assert "'push' scope" in answer.json()["error"] and "runs code" in answer.json()["error"]
        for path in ("?until=ended", "?until=ended&stream=progress"):  # the streamed door is the same door
            answer = client.post(f"/api/runs{path}", json={"env_slug": "trust-py", "model": "oracle"})
            assert answer.status_code == 403, answer.text
        assert _runs(client) == before  # nothing was queued
    assert not pushed["marker"].exists()


def test_a_run_key_runs_data_envs_with_vetted_policies(platform_server, pushed, wait) -> None:
    from rolloutgym import Client

    with Client(platform_server.url, platform_server.keys["run_only"]) as client:
        run = client.create_run(env_slug="trust-data", model="oracle", n=1)
        assert wait(client, run["runId"])["passRate"] == 1.0
        run = client.create_run(env_slug="toy/arith-v0", model="chaos:7", n=2, limit=2)
        assert wait(client, run["runId"])["state"] == "succeeded"
        assert "may_run_code" not in run["options"]


def test_a_push_key_may_choose_code(platform_server, pushed) -> None:
    """The same requests with the push scope are queued (what runs then is the org's own code, see the docs)."""
    with httpx.Client(base_url=platform_server.url, headers=_auth(platform_server, "all"), timeout=60) as client:
        answer = client.post("/api/runs", json={"env_slug": "trust-mcp-url", "model": "null", "limit": 1})
        assert answer.status_code == 201, answer.text
        answer = client.post(
            "/api/runs",
            json={"env_slug": "toy/arith-v0", "model": "openai:x", "limit": 1, "policy_options": {"base_url": "x"}},
        )
        assert answer.status_code == 201, answer.text


def test_file_references_resolve_only_to_the_orgs_own_rows(platform_server, pushed, wait) -> None:
    from rolloutgym import Client

    own = Client(platform_server.url, platform_server.keys["all"])
    other = Client(platform_server.url, platform_server.keys["other_org"])
    with own, other:
        source = wait(own, own.create_run(env_slug="toy/arith-v0", model="oracle", n=1, limit=2)["runId"])
        replayed = wait(
            own, own.create_run(env_slug="toy/arith-v0", model=f"replay:{source['id']}", n=1, limit=2)["runId"]
        )
        assert replayed["state"] == "succeeded" and replayed["passRate"] == 1.0, replayed
        other.push("toy/arith-v0")
    with httpx.Client(base_url=platform_server.url, timeout=60) as client:
        for key in ("other_org", "all", "run_only"):
            headers = _auth(platform_server, key)
            for policy in PATH_POLICIES:
                body = {"env_slug": "toy/arith-v0", "model": policy, "limit": 1}
                answer = client.post("/api/runs", json=body, headers=headers)
                assert answer.status_code == 400, (key, policy[:40], answer.text)
                assert platform_server.data.as_posix() not in answer.text
        headers = _auth(platform_server, "other_org")
        for policy in (f"replay:{source['id']}", "job:job_0123456789ab", "replay:run_0123456789ab"):
            answer = client.post("/api/runs", json={"env_slug": "toy/arith-v0", "model": policy}, headers=headers)
            assert answer.status_code == 404, (policy, answer.text)
        for reference in (f"runs/acme/{source['id']}.jsonl", f"{platform_server.data}/runs/acme/{source['id']}.jsonl"):
            answer = client.post("/api/envs", json={"kind": "id", "id": reference}, headers=headers)
            assert answer.status_code == 400, answer.text


def test_the_worker_refuses_code_queued_without_the_push_scope(platform_server, pushed, wait) -> None:
    """A row written past the API (an old row, a bug, a hand-edited database) still runs no code: the worker
    checks the rules again, from the row, before it loads the env or builds the policy."""
    from rolloutgym import Client
    from rolloutgym_platform import db
    from rolloutgym_platform.models import EnvVersion, RunRow
    from sqlalchemy import select

    sessions = db.open_database(platform_server.data, platform_server.database)
    ids = []
    with sessions.begin() as session:
        for slug, policy in (("trust-py", "oracle"), ("trust-mcp-command", "oracle"), ("toy/arith-v0", "harness:x")):
            version = session.scalars(
                select(EnvVersion).where(EnvVersion.org == "acme", EnvVersion.slug == slug).order_by(EnvVersion.id)
            ).all()[-1]
            ids.append(db.new_id("run"))
            options = {"env_version": version.version, "limit": 1}
            row = RunRow(id=ids[-1], org="acme", env_slug=slug, env_version_id=version.id, policy=policy, n=1)
            row.options, row.state, row.attempts = options, "queued", 0
            session.add(row)
    sessions.kw["bind"].dispose()
    with Client(platform_server.url, platform_server.keys["run_only"]) as client:
        for run_id in ids:
            run = wait(client, run_id)
            assert run["state"] == "failed" and "without the push scope" in run["error"], run
            assert str(platform_server.data) not in run["error"]
    assert not pushed["marker"].exists()


def test_training_jobs_take_names_and_hyper_parameters_only(platform_server, pushed, wait) -> None:
    from rolloutgym import Client

    with Client(platform_server.url, platform_server.keys["all"]) as client:
        run = wait(client, client.create_run(env_slug="toy/arith-v0", model="oracle", n=1, limit=1)["runId"])
    bad = [
        {"base_model": "hf:/etc"},
        {"base_model": "hf:../models/globex/job_0123456789ab/model"},
        {"base_model": "openai:gpt-4o"},
        {"base_model": "harness:command"},
        {"options": {"out": "/tmp/elsewhere"}},
        {"options": {"model": "hf:/etc"}},
        {"options": {"log": "/etc/cron.d/x"}},
        {"options": {"trainer_arg": "x=y"}},
        {"options": {"steps": "--out=/tmp/x"}},
        {"options": {"steps": float("inf")}},
        {"options": {"steps": [1, 2]}},
        {"options": ["steps"]},
        {"suffix": "x" * 500},
        {"method": "rm -rf"},
        {"source_run_id": "../runs/globex"},
    ]
    with httpx.Client(base_url=platform_server.url, headers=_auth(platform_server, "all"), timeout=60) as client:
        for change in bad:
            body = {"source_run_id": run["id"], "base_model": "hf:tiny", "method": "sft"} | change
            answer = client.post("/api/jobs", content=json.dumps(body))  # NaN and Infinity as Python writes them
            assert answer.status_code == 400, (change, answer.text)


def test_odd_identifiers_answer_4xx_on_both_databases(platform_server) -> None:
    """NUL and 5,000-character ids never reach the database (PostgreSQL refuses NUL in a string with an error)."""
    key = platform_server.keys["run_only"]
    paths = [
        "/api/runs/run_%00",
        "/api/jobs/job_%00",
        "/api/envs/a%00b",
        "/api/runs/" + "r" * 5000,
        "/api/runs?env=a%00",
    ]
    paths += ["/api/runs/run_%00/wait", "/api/runs/run_%00/passing", "/api/runs/run_%00/file"]
    with httpx.Client(base_url=platform_server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        for path in paths:
            answer = client.get(path)
            assert answer.status_code in (400, 404) and answer.json()["error"], (path[:40], answer.text[:100])
        for page in ("/runs/run_%00", "/jobs/job_%00", "/envs/a%00b"):
            answer = client.get(f"{page}?key={key}", follow_redirects=True)
            assert answer.status_code == 404, (page, answer.status_code)
        answer = client.post("/api/runs", json={"env_slug": "a\x00b", "model": "oracle"})
        assert answer.status_code == 400, answer.text


@pytest.mark.parametrize(
    "policy", ["hf:tiny", "hf:Qwen/Qwen3-0.6B", "openai:ft:gpt-4o-mini:org::id1", "openai:llama3:8b", "vllm:m@v2"]
)
def test_model_names_as_servers_spell_them_are_vetted(policy) -> None:
    """Colons and ``@`` are part of model names (OpenAI fine-tunes, Ollama tags), not paths."""
    from rolloutgym_platform import trust

    assert trust.policy_runs_code(policy, {"temperature": 0.5, "max_tokens": 8, "stop": ["\n"]}) is None
