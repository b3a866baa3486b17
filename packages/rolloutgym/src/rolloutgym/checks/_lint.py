"""The static lint: task data (empty and duplicate tasks, ground truth in the instruction or the tool
schemas) and, for a folder of Harbor tasks, the task folders (agent as root, unpinned images,
tests or solution copied into the agent's image, network at verification, a shared verifier)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from ..sources import ResolvedEnv
from ._records import FAIL, PASS, SKIP, WARN, CheckResult

__all__ = ["lint_folder", "lint_results", "lint_tasks"]

_GROUND_TRUTH_KEYS = ("answer", "solution", "expected", "ground_truth", "hidden_ground_truth", "target", "gold")
_WARN = "warn: "
_GENERATOR_KEYS = {"index", "seed", "position", "offset"}
_MIN_LEAK = 12  # characters: a shorter answer can appear in a prompt by chance


def lint_results(resolved: ResolvedEnv, reference: str) -> list[CheckResult]:
    """The ``lint`` result of the task data, plus ``lint:folder`` when ``reference`` is a folder of task folders."""
    results = [lint_tasks(resolved)]
    folder = Path(reference)
    if folder.is_dir() and (any(folder.glob("*/task.toml")) or (folder / "task.toml").is_file()):
        results.append(lint_folder(folder))
    return results


def lint_tasks(resolved: ResolvedEnv) -> CheckResult:
    """Empty tasks, duplicate tasks, and a task's ground truth written into its instruction or tools."""
    findings: list[str] = []
    warnings: list[str] = []
    seen: dict[str, tuple[str, str]] = {}
    items = [item for item in resolved.tasks if item is not None]
    for position, item in enumerate(items):
        task = str(resolved.task_ids[position]) if position < len(resolved.task_ids) else str(position)
        content = _content(item)
        if set(json.loads(content)) <= _GENERATOR_KEYS and content != "{}":  # a generated task's key, not its data
            continue
        if not content.strip('{}[]" ,:') or content in ("null",):
            findings.append(f"{task}: the task is empty")
            continue
        digest = hashlib.sha256(content.encode()).hexdigest()
        split = str(_as_dict(item).get("split", ""))
        if digest in seen:
            other, other_split = seen[digest]
            if split != other_split:
                findings.append(f"{task} ({split}): the same task data as {other} ({other_split}): a split leaks")
            else:
                warnings.append(f"{task}: the same task data as {other}")
        else:
            seen[digest] = (task, split)
        for key, truth, shown in _leaks(item):
            note = f"{task}: its {key} {truth[:60]!r} is written in its {shown}"
            (findings if len(truth) >= _MIN_LEAK else warnings).append(note)
    metrics = {"tasks": len(items)}
    if not items:
        return CheckResult("lint", SKIP, "the env has no task data to lint", metrics=metrics)
    if findings:
        return CheckResult("lint", FAIL, f"{len(findings)} problem(s) in the task data", findings + warnings, metrics)
    if warnings:
        return CheckResult("lint", WARN, f"{len(warnings)} warning(s) in the task data", warnings, metrics)
    return CheckResult(
        "lint", PASS, f"{len(items)} task(s): none empty, none duplicated, no answer in a prompt", metrics=metrics
    )


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump())
    return dict(getattr(item, "__dict__", {}) or {"value": item})


def _content(item: Any) -> str:
    # only the id and the split: a task_id or a name may be what points at the task's data elsewhere
    data = {key: value for key, value in _as_dict(item).items() if key not in ("id", "split")}
    return json.dumps(data, sort_keys=True, default=str)


def _leaks(item: Any) -> list[tuple[str, str, str]]:
    """``(key, truth, where)`` for ground truth found verbatim in the instruction or tool schemas."""
    data = _as_dict(item)
    shown = {
        key: json.dumps(value, default=str) if not isinstance(value, str) else value
        for key, value in data.items()
        if key in ("instruction", "prompt", "question", "task", "description", "tools", "messages", "problem")
    }
    found = []
    for key in _GROUND_TRUTH_KEYS:
        for truth in _truth_strings(data.get(key)):
            for where, text in shown.items():
                if re.search(rf"(?<![\w.]){re.escape(truth)}(?![\w.])", text):
                    found.append((key, truth, where))
    return found


def _truth_strings(value: Any) -> list[str]:
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, (int, float, str)):
        text = str(value).strip()
        return [text] if len(text) >= 4 else []
    return []  # a structured ground truth (an expected call, an end state) takes its values from the instruction


def lint_folder(root: Path) -> CheckResult:
    """Harbor task folders: the agent's image and the verifier's settings."""
    folders = [root] if (root / "task.toml").is_file() else sorted(path.parent for path in root.glob("*/task.toml"))
    findings: list[str] = []
    verifiers: dict[str, list[str]] = {}
    warnings: list[str] = []
    for folder in folders:
        for problem in _lint_task_folder(folder):
            if problem.startswith(_WARN):
                warnings.append(problem[len(_WARN) :])
            else:
                findings.append(problem)
        test = folder / "tests" / "test.sh"
        if test.is_file():
            verifiers.setdefault(hashlib.sha256(test.read_bytes()).hexdigest(), []).append(folder.name)
    shared = [names for names in verifiers.values() if len(names) > 1]
    warnings += [
        f"{', '.join(names)}: one tests/test.sh shared by several tasks (check it grades each)" for names in shared
    ]
    metrics = {"tasks": len(folders)}
    if findings:
        return CheckResult(
            "lint:folder",
            FAIL,
            f"{len(findings)} problem(s) in {len(folders)} task folder(s)",
            findings + warnings,
            metrics,
        )
    if warnings:
        return CheckResult(
            "lint:folder", WARN, f"{len(warnings)} warning(s) in {len(folders)} task folder(s)", warnings, metrics
        )
    return CheckResult("lint:folder", PASS, f"{len(folders)} task folder(s): no problem found", metrics=metrics)


def _lint_task_folder(folder: Path) -> list[str]:
    name = folder.name
    findings = []
    if not (folder / "solution" / "solve.sh").is_file():
        findings.append(f"{name}: no solution/solve.sh: the oracle cannot solve it")
    if not (folder / "tests" / "test.sh").is_file():
        findings.append(f"{name}: no tests/test.sh: nothing grades it")
    if not (folder / "instruction.md").is_file() or not (folder / "instruction.md").read_text().strip():
        findings.append(f"{name}: instruction.md is missing or empty")
    dockerfile = folder / "environment" / "Dockerfile"
    if dockerfile.is_file():
        findings.extend(
            _WARN + f"{name}: {problem[len(_WARN) :]}" if problem.startswith(_WARN) else f"{name}: {problem}"
            for problem in _lint_dockerfile(dockerfile.read_text())
        )
    try:
        settings = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return [*findings, f"{name}: task.toml does not parse ({exc})"]
    verifier = settings.get("verifier") or {}
    if isinstance(verifier, dict) and (verifier.get("network") or verifier.get("allow_internet")):
        findings.append(f"{name}: the verifier has network access (task.toml [verifier]); grading may depend on it")
    environment = settings.get("environment") or {}
    if isinstance(environment, dict) and environment.get("allow_internet") is True:
        findings.append(
            _WARN + f"{name}: the agent's environment allows the internet (task.toml [environment] allow_internet)"
        )
    return findings


def _lint_dockerfile(text: str) -> list[str]:
    problems = []
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    for line in lines:
        words = line.split()
        if words[0].upper() == "FROM" and len(words) > 1:
            image = next((word for word in words[1:] if not word.startswith("--")), "")
            if "@sha256:" not in image and (":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")):
                problems.append(
                    _WARN + f"Dockerfile: image {image} is not pinned (give a tag, better a @sha256 digest)"
                )
        if words[0].upper() in ("COPY", "ADD") and any(
            re.match(r"^\.?/?(tests|solution)(/|$)", word) for word in words[1:-1]
        ):
            problems.append(f"Dockerfile: '{line}' copies tests or the solution into the agent's image")
    users = [line.split()[1] for line in lines if line.split()[0].upper() == "USER" and len(line.split()) > 1]
    if not users or users[-1] in ("root", "0", "0:0"):
        problems.append(_WARN + "Dockerfile: the agent runs as root (no USER, or USER root last)")
    return problems
