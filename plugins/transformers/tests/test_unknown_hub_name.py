"""An ``hf:`` name that is no local folder or file and not in the local Hugging Face cache fails at once with a
one-line PolicyError when the hub is offline (HF_HUB_OFFLINE) or cannot be reached (here: HF_ENDPOINT on a closed
port of 127.0.0.1), instead of transformers retrying an unreachable hub for minutes. No network is used."""

from __future__ import annotations

import socket

import pytest
import rolloutgym as rg
from rolloutgym_protocol.errors import PolicyError


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("name", ["Org/nonesuch-model", "nonesuch-model", "./no/such/folder", "~/no-such-model"])
@pytest.mark.parametrize("hub", ["offline", "unreachable"])
def test_an_unknown_name_fails_fast(monkeypatch, tmp_path, name, hub) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    if hub == "offline":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(PolicyError) as caught:
        rg.run("toy/arith-v0", policy=f"hf:{name}", limit=1, out=None)
    message = str(caught.value)
    assert f"hf:{name}: no such local folder or file" in message and "hf:tiny" in message
    if name.startswith(("./", "~")):  # a path that does not exist is no hub name
        assert "it is not a hub name either" in message
    else:
        assert ("HF_HUB_OFFLINE is set" if hub == "offline" else "cannot be reached") in message
    assert "\n" not in message
