"""The built-in ``jsonl`` exporter: one trajectory per line with its task, reward and score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._store import Run

__all__ = ["export_jsonl"]


def export_jsonl(run: Run, out_path: str | Path, **options: Any) -> Path:
    """Write one line per trajectory: ``task_id``, ``member``, ``reward``, ``score``, ``trajectory``."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for group in run.groups:
            for trajectory, score in zip(group.trajectories, group.scores, strict=True):
                record = {
                    "env_id": run.env_id,
                    "task_id": group.item_id,
                    "member": trajectory.metadata.get("member"),
                    "reward": score.value,
                    "score": score.to_dict(),
                    "trajectory": trajectory.to_dict(),
                }
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out
