"""``run_isolated``: code a less trusted party chose runs as an unprivileged uid on an allow-listed filesystem.

One sandboxed probe (one process start) tries every way out it can think of and writes what it
got into its writable folder; the test then reads that record. Needs bubblewrap (and, for the uid
drop, root: CI runs as root)."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rolloutgym.sandboxes import CredentialProxy, Isolation, SandboxInfraError, isolation_problem, run_isolated
from rolloutgym.sandboxes import isolated as isolated_module

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=str(isolation_problem()))

PROBE = r"""
import json, os, socket, sys, time
results = {}
def attempt(name, function, keep=repr):
    try:
        results[name] = ["allowed", keep(function()) if keep is list else keep(function())[:200]]
    except BaseException as exc:  # noqa: BLE001
        results[name] = ["denied", type(exc).__name__]
args = json.loads(sys.argv[1])
results["uid"] = os.getuid()
results["environment"] = sorted(os.environ)
attempt("read_secret_outside", lambda: open(args["outside"]).read())
attempt("list_outside_folder", lambda: os.listdir(os.path.dirname(args["outside"])))
attempt("read_hidden_file_in_bound_folder", lambda: open(args["hidden_file"]).read())
attempt("list_hidden_folder_in_bound_folder", lambda: os.listdir(args["hidden_folder"]) or 1 / 0)
attempt("read_shared_file", lambda: open(args["shared_file"]).read())
attempt("read_etc_shadow", lambda: open("/etc/shadow").read())
attempt("read_etc_passwd", lambda: open("/etc/passwd").read())
attempt("list_root_home", lambda: [n for n in os.listdir("/root") if n not in (".local", ".pyenv")] or 1 / 0)
attempt("write_shared_folder", lambda: open(os.path.join(os.path.dirname(args["shared_file"]), "x"), "w"))
attempt("write_usr", lambda: open("/usr/rolloutgym-pwned", "w"))
attempt("write_root_of_sandbox", lambda: open("/pwned", "w"))
attempt("write_python_prefix", lambda: open(os.path.join(sys.prefix, "pwned"), "w"))
attempt("write_own_folder", lambda: open("mine.txt", "w").write("ok"))
attempt("setuid_root", lambda: os.setuid(0))
attempt("signal_host_process", lambda: os.kill(args["host_pid"], 0))
attempt("host_process_environ", lambda: open(f"/proc/{args['host_pid']}/environ").read())
attempt("processes_seen", lambda: [p for p in os.listdir("/proc") if p.isdigit()][10:] or 1 / 0)
attempt("connect_host_port", lambda: socket.create_connection(("127.0.0.1", args["port"]), timeout=2))
attempt("file_past_size_limit", lambda: open("big", "wb").write(b"x" * (3 << 20)) and os.fsync(0))
attempt("tmp_past_its_size", lambda: open("/tmp/fill", "wb").write(b"x" * (5 << 20)))
import http.client
def ask(method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", args["relay_port"], timeout=20)
    connection.request(method, path, body=body, headers={"Authorization": "Bearer stolen?", "X-Host": "evil"})
    response = connection.getresponse()
    return [response.status, response.read().decode()]
attempt("model_call", lambda: ask("POST", "/chat/completions", b'{"model": "m"}'), list)
attempt("absolute_url", lambda: ask("GET", "http://169.254.169.254/latest/meta-data"), list)
attempt("scheme_relative_path", lambda: ask("GET", "//169.254.169.254/x"), list)
import rolloutgym  # the interpreter's own import path is there, read-only
results["rolloutgym"] = rolloutgym.__name__
forked = 0
for _ in range(200):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        forked += 1
    except OSError:
        break
results["forked"] = forked
json.dump(results, open("result.json", "w"))
"""


class _Upstream(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        seen = {"path": self.path, "auth": self.headers.get("Authorization"), "body": body.decode()}
        seen["extra"] = self.headers.get("X-Host")
        data = json.dumps(seen).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("isolated")
    outside = root / "other-org" / "runs" / "secret.jsonl"
    outside.parent.mkdir(parents=True)
    outside.write_text("other org's run")
    shared = root / "shared"
    (shared / "private").mkdir(parents=True)
    (shared / "private" / "key.txt").write_text("private key")
    (shared / "platform.db").write_text("database")
    (shared / "env.py").write_text("print('env')")
    (shared / "probe.py").write_text(PROBE)
    shared.chmod(0o755)
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    arguments = {
        "outside": str(outside),
        "hidden_file": str(shared / "platform.db"),
        "hidden_folder": str(shared / "private"),
        "shared_file": str(shared / "env.py"),
        "host_pid": os.getpid(),
        "port": listener.getsockname()[1],
        "relay_port": 8321,
    }
    proxy_url = f"http://127.0.0.1:{upstream.server_address[1]}/v1"
    proxy = CredentialProxy(proxy_url, {"Authorization": "Bearer sk-host-key"}, root / "model.sock")
    os.environ["ROLLOUTGYM_TEST_SECRET"] = "s3cret"
    try:
        with proxy:
            result = run_isolated(
                [sys.executable, "-I", str(shared / "probe.py"), json.dumps(arguments)],
                Isolation(
                    writable=root / "work",
                    read_only=[shared],
                    hidden=[shared / "platform.db", shared / "private"],
                    environment={"GIVEN": "1"},
                    processes=32,
                    file_size_bytes=1 << 20,
                    tmp_bytes=1 << 20,
                    forward=[(8321, str(root / "model.sock"))],
                ),
                timeout=120,
            )
    finally:
        del os.environ["ROLLOUTGYM_TEST_SECRET"]
        listener.close()
        upstream.shutdown()
        upstream.server_close()
    assert result.returncode == 0, result.stderr_tail
    return {"root": root, "results": json.loads((root / "work" / "result.json").read_text())}


DENIED = [
    "read_secret_outside",
    "list_outside_folder",
    "read_etc_shadow",
    "read_etc_passwd",
    "list_root_home",
    "write_shared_folder",
    "write_usr",
    "write_root_of_sandbox",
    "write_python_prefix",
    "setuid_root",
    "signal_host_process",
    "host_process_environ",
    "processes_seen",
    "connect_host_port",
    "file_past_size_limit",
    "tmp_past_its_size",
    "list_hidden_folder_in_bound_folder",
]


@pytest.mark.parametrize("route", DENIED)
def test_a_way_out_is_denied(probed: dict, route: str) -> None:
    assert probed["results"][route][0] == "denied", probed["results"][route]


def test_what_it_may_use_is_there(probed: dict) -> None:
    results = probed["results"]
    assert results["read_shared_file"] == ["allowed", repr("print('env')")]
    assert results["write_own_folder"][0] == "allowed"
    assert (probed["root"] / "work" / "mine.txt").read_text() == "ok"
    assert results["rolloutgym"] == "rolloutgym"


def test_a_hidden_file_in_a_bound_folder_is_not_its_content(probed: dict) -> None:
    outcome = probed["results"]["read_hidden_file_in_bound_folder"]
    assert outcome in (["allowed", "''"], ["denied", "PermissionError"], ["denied", "FileNotFoundError"])


def test_no_variable_is_inherited(probed: dict) -> None:
    allowed = set(isolated_module.BASE_ENVIRONMENT) | {"GIVEN"}
    extra = set(probed["results"]["environment"]) - allowed
    assert extra <= {"LC_CTYPE", "PWD"}, extra  # set by Python and bubblewrap themselves
    assert "ROLLOUTGYM_TEST_SECRET" not in probed["results"]["environment"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop is what root does")
def test_root_drops_to_a_fresh_uid_whose_process_count_is_limited(probed: dict) -> None:
    uid = probed["results"]["uid"]
    assert uid >= 1_000_000
    assert (probed["root"] / "work" / "mine.txt").stat().st_uid == uid
    assert 0 < probed["results"]["forked"] < 32  # the fork loop stopped at RLIMIT_NPROC; its sleepers died with it


def test_an_interpreter_other_users_cannot_read_is_refused_with_the_fix(tmp_path: Path, monkeypatch) -> None:
    private = tmp_path / "home"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(isolated_module, "python_roots", lambda: [str(private)])
    with pytest.raises(SandboxInfraError, match=r"not readable by other users.*chmod o\+rX"):
        run_isolated(["true"], Isolation(writable=tmp_path / "work"))


def test_without_bubblewrap_the_error_names_the_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(isolated_module.shutil, "which", lambda name: None)
    with pytest.raises(SandboxInfraError, match="apt-get install bubblewrap"):
        run_isolated(["true"], Isolation(writable=tmp_path / "work"))


def test_the_one_service_it_may_reach_gets_the_hosts_key_which_the_sandbox_never_sees(probed: dict) -> None:
    status, text = probed["results"]["model_call"][1]
    seen = json.loads(text)
    assert status == 200 and seen["path"] == "/v1/chat/completions" and seen["body"] == '{"model": "m"}'
    assert seen["auth"] == "Bearer sk-host-key" and seen["extra"] is None  # the sandbox's own headers dropped


@pytest.mark.parametrize("route", ["absolute_url", "scheme_relative_path"])
def test_the_proxy_reaches_no_other_host(probed: dict, route: str) -> None:
    # 400 from the proxy, or 501 from the configured upstream (it answers POST only): never another host
    assert probed["results"][route][1][0] in (400, 501), probed["results"][route]


def test_stop_ends_the_sandbox_and_what_it_started(tmp_path: Path) -> None:
    script = "sleep 600 & sleep 600; echo never >> done.txt"
    ended = run_isolated(
        ["/bin/sh", "-c", script], Isolation(writable=tmp_path / "work", python=False), stop=lambda: True
    )
    assert ended.returncode != 0 and not (tmp_path / "work" / "done.txt").exists()
