"""Models to train: the same references as the ``hf`` policy (``hf:tiny``, ``hf:smollm2``, ``hf:PATH``).

The model is loaded through :func:`rolloutgym_transformers.load_model` (one resolver of
local models: GGUF conversion, the built-in tiny model, local folders) as a private copy
(``shared=False``: a fresh load, no deep copy of the process-wide one), so training never
changes the copy that ``--policy hf:...`` evaluations use. A GGUF is converted once and the
converted checkpoint cached (``$ROLLOUTGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rolloutgym``,
else ``~/.cache/rolloutgym``), so later starts load it in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError, RolloutGymError

__all__ = ["TrainableModel", "load_trainable", "model_name", "save_trained"]

_BUILT_IN = ("tiny", "smollm2")


@dataclass
class TrainableModel:
    """A fresh copy of a model and its tokenizer, ready for a TRL trainer."""

    reference: str
    model: Any
    tokenizer: Any


def model_name(reference: str) -> str:
    """``hf:NAME`` or ``NAME`` -> ``NAME``; refuses an empty reference."""
    name = reference[3:] if reference.startswith("hf:") else reference
    if not name:
        raise ConfigError("--model needs a model: hf:tiny, hf:smollm2 or a folder with config.json (hf:PATH)")
    return name


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.endswith(".gguf") or Path(name).expanduser().exists()


def load_trainable(reference: str, *, device: str = "cpu") -> TrainableModel:
    """Load ``reference`` (``hf:tiny``, ``hf:smollm2``, ``hf:PATH``, ``PATH``) for training.

    Raises:
        ConfigError: the path does not exist, or the model cannot be loaded.
    """
    name = model_name(reference)
    if name not in _BUILT_IN and _looks_like_path(name) and not Path(name).expanduser().exists():
        raise ConfigError(
            f"--model {reference}: no such file or folder '{name}'. Give a folder with config.json (e.g. the "
            "output of an earlier 'rolloutgym train'), a .gguf file, hf:smollm2 or hf:tiny"
        )
    from rolloutgym_transformers import load_model

    try:
        loaded = load_model(name, device=device, shared=False)
    except RolloutGymError as exc:
        raise ConfigError(f"--model {reference}: {exc}") from None
    model, tokenizer = loaded.model, loaded.tokenizer
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.train()
    return TrainableModel(reference, model, tokenizer)


def save_trained(model: Any, tokenizer: Any, out_dir: str | Path) -> Path:
    """Save a trained model (merged when it is a LoRA model) so that ``--policy hf:OUT_DIR`` loads it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    merge = getattr(model, "merge_and_unload", None)
    if callable(merge):  # a PEFT model: save plain weights so that hf:PATH needs no peft
        model = merge()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
