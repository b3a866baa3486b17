"""Where benchmark rows come from: the shipped samples, a local file or folder, or the Hugging Face hub.

The hub is reached through ``datasets`` (imported only here, only when asked). Before any
download a short connection probe runs, so an offline machine gets an error at once that
names the ``path=`` option instead of a minute of retries.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import socket
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.errors import ConfigError, RolloutGymError

__all__ = ["DatasetUnavailable", "installed_version", "load_hub_rows", "read_local_rows", "sample_rows"]

PROBE_TIMEOUT_SECONDS = 3.0
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")


class DatasetUnavailable(RolloutGymError, ConnectionError):
    """The requested hub dataset cannot be loaded (no network, not cached, not found)."""


@functools.cache
def installed_version(distribution: str) -> str | None:
    """The installed version of a benchmark's package (``None`` when it is not installed).

    Read once per process: the graders name it in every score's metadata, and reading the
    package metadata costs about 430 µs, more than grading a reasoning-gym reply."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def sample_rows(name: str) -> list[dict[str, Any]]:
    """The rows of a sample set shipped in the package (``gsm8k_sample.jsonl``, ``aime_sample.jsonl``)."""
    text = resources.files("rolloutgym_benchmarks").joinpath("data", name).read_text(encoding="utf-8")
    return _jsonl_rows(text, name)


def _jsonl_rows(text: str, where: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{where}, line {number}: not valid JSON ({error.msg}); each line must be one JSON object"
            ) from None
        if not isinstance(row, dict):
            raise ConfigError(
                f"{where}, line {number}: expected a JSON object with the problem's fields, got {type(row).__name__}"
            )
        rows.append(row)
    return rows


def read_local_rows(
    path: str | os.PathLike[str], *, config: str | None = None, split: str | None = None
) -> list[dict[str, Any]]:
    """Rows from a local ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file, or a ``datasets`` folder.

    A folder written by ``Dataset.save_to_disk`` is read with ``load_from_disk``; any other
    folder (a downloaded copy of the hub repository) with ``load_dataset(folder, config, split)``.

    Raises:
        ConfigError: the path does not exist, or a file is malformed or of an unknown type.
    """
    location = Path(path).expanduser()
    if not location.exists():
        raise ConfigError(
            f"benchmark data path '{location}' does not exist; give a .jsonl/.json/.csv/.parquet file or a datasets "
            "folder"
        )
    if location.is_dir():
        return _rows_from_folder(location, config=config, split=split)
    suffix = location.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_rows(location.read_text(encoding="utf-8"), str(location))
    if suffix == ".json":
        try:
            data = json.loads(location.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ConfigError(f"{location}: not valid JSON ({error.msg})") from None
        if isinstance(data, Mapping):
            data = data.get("rows", data.get("data", data.get(split or "test")))
        if not isinstance(data, list) or not all(isinstance(row, Mapping) for row in data):
            raise ConfigError(f'{location}: expected a JSON list of objects (or {{"rows": [...]}})')
        return [dict(row) for row in data]
    if suffix == ".csv":
        with location.open(newline="", encoding="utf-8") as handle:
            return [dict(row) for row in csv.DictReader(handle)]
    if suffix == ".parquet":
        datasets = _import_datasets()
        return [dict(row) for row in datasets.load_dataset("parquet", data_files=str(location), split="train")]
    raise ConfigError(f"{location}: unknown file type '{suffix}'; use .jsonl, .json, .csv or .parquet")


def _rows_from_folder(location: Path, *, config: str | None, split: str | None) -> list[dict[str, Any]]:
    datasets = _import_datasets()
    try:
        if (location / "dataset_info.json").exists() or (location / "dataset_dict.json").exists():
            loaded = datasets.load_from_disk(str(location))
            if isinstance(loaded, datasets.DatasetDict):
                loaded = loaded[split or "test"]
            return [dict(row) for row in loaded]
        return [dict(row) for row in datasets.load_dataset(str(location), config, split=split or "test")]
    except (KeyError, ValueError, FileNotFoundError) as error:
        raise ConfigError(f"cannot read the dataset folder '{location}' (split {split!r}): {error}") from None


def _import_datasets() -> Any:
    try:
        import datasets  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError(
            "loading benchmark data from the hub, a folder or a .parquet file needs the 'datasets' package: "
            f"{pip_install('rolloutgym-benchmarks', 'datasets')}. Or give a .jsonl/.json/.csv file with path=..."
        ) from None
    return datasets


def _offline_mode() -> bool:
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in _OFFLINE_VARIABLES)


def _hub_reachable() -> tuple[bool, str]:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    parsed = urlparse(endpoint)
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (443 if parsed.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_SECONDS):
            return True, endpoint
    except OSError as error:
        return False, f"{endpoint} ({error.__class__.__name__}: {error})"


def _unavailable(dataset: str, reason: str) -> DatasetUnavailable:
    return DatasetUnavailable(
        f"cannot load the dataset '{dataset}' from the Hugging Face hub: {reason}. "
        f"Download it elsewhere and pass the local copy with path=... (a .jsonl/.json/.csv/.parquet file or a "
        f"datasets folder), or set HF_HUB_OFFLINE=1 to use a copy already in the datasets cache; with no data "
        f"given, the small sample set shipped in the package is used."
    )


def load_hub_rows(
    dataset: str, config: str | None, split: str, *, fallback_splits: Iterable[str] = ()
) -> tuple[list[dict[str, Any]], str]:
    """Rows of ``dataset`` from the hub (or the local cache in offline mode) and the split actually used.

    Raises:
        DatasetUnavailable: the hub cannot be reached, or the dataset or split cannot be loaded.
        ImportError: ``datasets`` is not installed (the message says what to install).
    """
    datasets = _import_datasets()
    if not _offline_mode():
        reachable, where = _hub_reachable()
        if not reachable:
            raise _unavailable(dataset, f"the hub is unreachable at {where}")
    attempts = [split, *fallback_splits]
    for index, attempt in enumerate(attempts):
        try:
            loaded = datasets.load_dataset(dataset, config, split=attempt)
        except ValueError as error:
            if "split" in str(error).lower() and index < len(attempts) - 1:
                continue
            raise _unavailable(dataset, f"{error}") from None
        except Exception as error:  # network, auth and cache errors from datasets/huggingface_hub have no common base
            raise _unavailable(dataset, f"{error.__class__.__name__}: {error}") from None
        return [dict(row) for row in loaded], attempt
    raise _unavailable(dataset, f"no split {split!r}")
