"""The rollout SDK's ``ROLLOUT_API_KEY``/``ROLLOUT_ENDPOINT`` are aliases of ``ROLLOUTGYM_API_KEY``/
``ROLLOUTGYM_ENDPOINT`` (never silently ignored); ours win when both are set; ``Client()`` arguments win over both."""

from __future__ import annotations

import pytest
from rolloutgym.platform import credentials
from rolloutgym.platform.errors import AuthenticationError

NAMES = ("ROLLOUTGYM_API_KEY", "ROLLOUTGYM_ENDPOINT", "ROLLOUT_API_KEY", "ROLLOUT_ENDPOINT")


@pytest.fixture
def clean(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"ROLLOUT_API_KEY": "rk_seed", "ROLLOUT_ENDPOINT": "http://127.0.0.1:9"}, ("http://127.0.0.1:9", "rk_seed")),
        ({"ROLLOUTGYM_API_KEY": "rk_ours", "ROLLOUT_API_KEY": "rk_seed", "ROLLOUT_ENDPOINT": "http://127.0.0.1:9"},
         ("http://127.0.0.1:9", "rk_ours")),
        ({"ROLLOUT_API_KEY": "rk_seed", "ROLLOUTGYM_ENDPOINT": "http://127.0.0.1:8",
          "ROLLOUT_ENDPOINT": "http://127.0.0.1:9"}, ("http://127.0.0.1:8", "rk_seed")),
        ({"ROLLOUT_API_KEY": "", "ROLLOUTGYM_API_KEY": "rk_ours", "ROLLOUT_ENDPOINT": "http://127.0.0.1:9"},
         ("http://127.0.0.1:9", "rk_ours")),
    ],
)  # fmt: skip
def test_the_seed_spellings_are_read(clean, environment, expected) -> None:
    for name, value in environment.items():
        clean.setenv(name, value)
    assert credentials.resolve() == expected
    assert credentials.resolve("http://127.0.0.1:7", "rk_arg") == ("http://127.0.0.1:7", "rk_arg")


def test_without_any_key_the_error_names_ours(clean) -> None:
    clean.setenv("ROLLOUT_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(AuthenticationError, match="ROLLOUTGYM_API_KEY"):
        credentials.resolve()
