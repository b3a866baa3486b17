"""``rolloutgym serve`` start errors in one line, before "serving on": a port in use (IPv4 loopback, all
addresses), an address that is not this machine's, and a missing module of the ``serve`` extra (what an install
with only rolloutgym-platform lacks)."""

from __future__ import annotations

import socket

import pytest
from rolloutgym.cli import main
from rolloutgym.cli import serve as serve_cli


def _out(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


@pytest.mark.parametrize("bound", ["127.0.0.1", "0.0.0.0"])
def test_a_port_in_use_is_said_before_serving_on(capsys, bound) -> None:
    with socket.socket() as holder:
        holder.bind((bound, 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out = _out(capsys, "serve", "toy/guess-v0", "--port", str(port))
    assert code == 2 and f"cannot serve on 127.0.0.1:{port}" in out and "--port N" in out
    assert "serving" not in out.replace("cannot serve", "") and "Traceback" not in out


def test_an_address_of_another_machine(capsys) -> None:
    code, out = _out(capsys, "serve", "toy/guess-v0", "--host", "192.0.2.1", "--port", "8000", "--token", "t")
    assert code == 2 and "cannot serve on 192.0.2.1:8000" in out and "Traceback" not in out


def test_a_missing_module_of_the_serve_extra(capsys, monkeypatch) -> None:
    monkeypatch.setattr(serve_cli, "SERVE_MODULES", (*serve_cli.SERVE_MODULES, "rolloutgym_no_such_module"))
    code = main(["serve", "toy/guess-v0"])
    err = capsys.readouterr().err
    assert code == 2 and "rolloutgym_no_such_module missing" in err and "[serve]" in err
    assert err.count("error:") == 1 and "Traceback" not in err
