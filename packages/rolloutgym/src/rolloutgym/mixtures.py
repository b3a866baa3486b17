"""Env mixtures: several environments with weights in one run.

``rolloutgym run --mix sql/shop-v0=2,workflow/refund-v0=1,bench/gsm8k-v0=1`` (or
``--mix mixture.json``) runs tasks of every env of the mixture, in proportion to the
weights, and writes them to one run file; ``show``, ``compare``, ``export`` and
``report`` break the results down per env.

* :func:`parse_mixture` reads ``"ENV=WEIGHT,..."``, a mapping, or a mixture file (a JSON
  object ``{"ENV": WEIGHT}``, a JSON list of ``{"env", "weight"}``, or a text file with one
  ``ENV=WEIGHT`` per line, ``#`` comments allowed);
* :func:`allocate` says how many tasks each env contributes (all the envs can supply at
  those proportions, or ``limit`` in total);
* :func:`interleave` orders them so that any prefix of the run is mixed in proportion.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = [
    "MixtureEntry",
    "allocate",
    "env_breakdown",
    "env_of_group",
    "interleave",
    "is_mixture",
    "mixture_label",
    "parse_mixture",
    "position_envs",
    "split_by_env",
]


@dataclass(frozen=True)
class MixtureEntry:
    """One env of a mixture and its weight (a positive number)."""

    env: str
    weight: float = 1.0


def _weight(env: str, value: Any) -> float:
    try:
        weight = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"mixture weight of {env!r} must be a number, got {value!r}") from None
    if not math.isfinite(weight) or weight <= 0:
        raise ConfigError(f"mixture weight of {env!r} must be a positive number, got {value!r}")
    return weight


def _pairs_from_text(text: str, *, separator: str) -> list[tuple[str, Any]]:
    pairs = []
    for raw in text.split(separator):
        part = raw.split("#", 1)[0].strip() if separator == "\n" else raw.strip()
        if not part:
            continue
        env, equals, weight = part.partition("=")
        pairs.append((env.strip(), weight.strip() if equals else 1))
    return pairs


def _pairs_from_file(path: Path) -> list[tuple[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"mixture file {path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if isinstance(data, Mapping):
            return list(data.items())
        if isinstance(data, list) and all(isinstance(item, Mapping) and "env" in item for item in data):
            return [(str(item["env"]), item.get("weight", 1)) for item in data]
        raise ConfigError(
            f'mixture file {path}: expected {{"ENV": WEIGHT, ...}} or [{{"env": ENV, "weight": WEIGHT}}, ...]'
        )
    return _pairs_from_text(text, separator="\n")


def parse_mixture(value: str | Path | Mapping[str, Any] | Sequence[Any]) -> list[MixtureEntry]:
    """The entries of a mixture given as text, a mapping, a list, or a mixture file path.

    Raises:
        ConfigError: an empty mixture, a repeated env, or a weight that is not positive.
    """
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, Path) or (isinstance(value, str) and Path(value).is_file()):
        pairs = _pairs_from_file(Path(value))
    elif isinstance(value, str):
        pairs = _pairs_from_text(value, separator=",")
    elif isinstance(value, Sequence):
        pairs = [
            (item.env, item.weight)
            if isinstance(item, MixtureEntry)
            else (item, 1)
            if isinstance(item, str)
            else tuple(item)
            for item in value
        ]
    else:
        raise ConfigError(f"a mixture is 'ENV=WEIGHT,...', a mapping or a mixture file, got {type(value).__name__}")
    entries: list[MixtureEntry] = []
    for env, weight in pairs:
        env = str(env).strip()
        if not env:
            raise ConfigError("a mixture entry has no env id; write ENV=WEIGHT, e.g. sql/shop-v0=2")
        if any(entry.env == env for entry in entries):
            raise ConfigError(f"env {env!r} appears twice in the mixture; give it one weight")
        entries.append(MixtureEntry(env, _weight(env, weight)))
    if not entries:
        raise ConfigError("the mixture is empty; use e.g. --mix sql/shop-v0=2,workflow/refund-v0=1")
    return entries


def mixture_label(entries: Sequence[MixtureEntry]) -> str:
    """``"sql/shop-v0=2,workflow/refund-v0=1"``: the mixture as one line."""
    return ",".join(f"{entry.env}={entry.weight:g}" for entry in entries)


def allocate(entries: Sequence[MixtureEntry], available: Mapping[str, int], limit: int | None = None) -> dict[str, int]:
    """How many tasks each env contributes.

    Without ``limit``: the largest set of tasks in the weights' proportions that every env
    can supply (an env with fewer tasks than its share bounds the others). With ``limit``:
    ``limit`` tasks in total, split by weight (largest remainders first); an env that runs
    out of tasks leaves its share to the others.
    """
    counts = {entry.env: 0 for entry in entries}
    if limit is None:
        scale = min(available[entry.env] / entry.weight for entry in entries)
        for entry in entries:
            counts[entry.env] = min(available[entry.env], max(1, math.floor(entry.weight * scale + 1e-9)))
        return counts
    remaining = min(limit, sum(available[entry.env] for entry in entries))
    open_entries = [entry for entry in entries if available[entry.env] > 0]
    while remaining > 0 and open_entries:
        total = sum(entry.weight for entry in open_entries)
        shares = {entry.env: remaining * entry.weight / total for entry in open_entries}
        granted = {env: math.floor(share) for env, share in shares.items()}
        leftover = remaining - sum(granted.values())
        for env in sorted(shares, key=lambda name: (granted[name] - shares[name], list(shares).index(name)))[:leftover]:
            granted[env] += 1
        for entry in open_entries:
            room = available[entry.env] - counts[entry.env]
            take = min(room, granted[entry.env])
            counts[entry.env] += take
            remaining -= take
        open_entries = [entry for entry in open_entries if counts[entry.env] < available[entry.env]]
    return counts


def interleave(entries: Sequence[MixtureEntry], counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """The run order: ``(env, k)`` for the k-th task of each env, spread evenly.

    Each position goes to the env that is furthest behind its share, so any prefix of the
    run holds the envs in proportion (ties go to the env listed first).
    """
    taken = {entry.env: 0 for entry in entries}
    order: list[tuple[str, int]] = []
    for _ in range(sum(counts[entry.env] for entry in entries)):
        candidates = [entry for entry in entries if taken[entry.env] < counts[entry.env]]
        chosen = min(candidates, key=lambda entry: (taken[entry.env] + 0.5) / counts[entry.env])
        order.append((chosen.env, taken[chosen.env]))
        taken[chosen.env] += 1
    return order


def env_of_group(group: Any, header: Mapping[str, Any]) -> str:
    """The env a run-file group belongs to (its ``env_id``; the run's env for plain runs)."""
    metadata = getattr(group, "metadata", None) or {}
    env_id = metadata.get("env_id")
    return str(env_id) if env_id else str(header.get("env", {}).get("id", "?"))


def split_by_env(
    groups: Sequence[Any], task_indices: Sequence[int], header: Mapping[str, Any]
) -> dict[str, tuple[list[Any], list[int]]]:
    """Groups (and their task indices) per env, in run order, envs in mixture order."""
    order = [str(entry["id"]) for entry in header.get("mixture", ())]
    split: dict[str, tuple[list[Any], list[int]]] = {env: ([], []) for env in order}
    for group, index in zip(groups, task_indices, strict=True):
        bucket = split.setdefault(env_of_group(group, header), ([], []))
        bucket[0].append(group)
        bucket[1].append(index)
    return {env: value for env, value in split.items() if value[0]}


def is_mixture(header: Mapping[str, Any]) -> bool:
    """The run file holds several envs (written by ``rolloutgym run --mix``)."""
    return bool(header.get("mixture"))


def position_envs(header: Mapping[str, Any]) -> dict[int, str]:
    """``{task_index: env_id}`` of a mixture run (empty for a one-env run)."""
    envs: dict[int, str] = {}
    for entry in header.get("mixture") or ():
        for position in entry.get("positions", ()):
            envs[int(position)] = str(entry["id"])
    return envs


def env_breakdown(header: Mapping[str, Any], tasks: Sequence[Any]) -> list[dict[str, Any]]:
    """Per-env totals of a run's per-task numbers, envs in mixture order.

    Args:
        header: the run header.
        tasks: per-task records with ``task_index``, ``trajectories``, ``passes``,
            ``mean_reward``, ``mean_turns`` and ``errors`` (``RunSummary.tasks`` or the
            report's task index), as objects or dicts.

    Returns:
        One dict per env: ``env``, ``weight``, ``tasks``, ``trajectories``, ``passes``,
        ``pass_rate``, ``mean_reward``, ``mean_turns``, ``errors``.
    """
    envs = position_envs(header)
    weights = {str(entry["id"]): entry.get("weight", 1.0) for entry in header.get("mixture") or ()}
    default = str(header.get("env", {}).get("id", "?"))
    rows: dict[str, dict[str, Any]] = {
        env: {
            "env": env,
            "weight": weight,
            "tasks": 0,
            "trajectories": 0,
            "passes": 0,
            "reward": 0.0,
            "turns": 0.0,
            "errors": 0,
        }
        for env, weight in weights.items()
    }
    for task in tasks:
        get = task.get if isinstance(task, Mapping) else lambda name, task=task: getattr(task, name)
        env = envs.get(int(get("task_index")), default)
        row = rows.setdefault(
            env,
            {
                "env": env,
                "weight": weights.get(env, 1.0),
                "tasks": 0,
                "trajectories": 0,
                "passes": 0,
                "reward": 0.0,
                "turns": 0.0,
                "errors": 0,
            },
        )
        count = int(get("trajectories"))
        row["tasks"] += 1
        row["trajectories"] += count
        row["passes"] += int(get("passes"))
        row["reward"] += float(get("mean_reward")) * count
        row["turns"] += float(get("mean_turns")) * count
        row["errors"] += int(get("errors"))
    table = []
    for row in rows.values():
        count = row["trajectories"]
        table.append(
            {
                "env": row["env"],
                "weight": row["weight"],
                "tasks": row["tasks"],
                "trajectories": count,
                "passes": row["passes"],
                "pass_rate": row["passes"] / count if count else 0.0,
                "mean_reward": row["reward"] / count if count else 0.0,
                "mean_turns": row["turns"] / count if count else 0.0,
                "errors": row["errors"],
            }
        )
    return table
