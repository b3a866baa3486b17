"""The report card: one :class:`CheckResult` per check, gathered in a :class:`CheckReport`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckReport", "CheckResult", "FAIL", "KNOWN", "PASS", "SKIP", "WARN"]

PASS = "pass"
FAIL = "fail"
WARN = "warn"  # worth a look, not a failure (exit code 0)
SKIP = "skip"  # not applicable to this env (no tools, no sandbox, ...) or not asked for
KNOWN = "known"  # failed, and the failure is recorded with its reason (a waiver): exit code 0

_ORDER = {FAIL: 0, KNOWN: 1, WARN: 2, PASS: 3, SKIP: 4}


@dataclass
class CheckResult:
    """The outcome of one check on one env.

    Attributes:
        name: the check (``ceiling``, ``floor``, ``determinism``, ``probe:reward-file``, ``lint``, ...).
        status: ``pass``, ``fail``, ``warn``, ``skip`` or ``known`` (a failure waived with a reason).
        summary: one line a person reads on the card.
        findings: one line per task or file that failed (``task-id: what happened``).
        metrics: numbers behind the summary (scores, shares, counts).
        reason: why a failure is known (the waiver's text).
    """

    name: str
    status: str
    summary: str
    findings: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "status": self.status, "summary": self.summary}
        if self.findings:
            data["findings"] = list(self.findings)
        if self.metrics:
            data["metrics"] = dict(self.metrics)
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass
class CheckReport:
    """Every check's result for one env: ``report.ok`` is False when any check failed.

    Attributes:
        env_id: the checked env's id.
        reference: what was checked (an id, a file, a folder or a URL).
        tasks_checked: ids of the tasks the episode checks ran on (a seeded sample or all).
        tasks_total: how many tasks the env has.
        results: the checks in the order they ran.
        seconds: wall time of the whole check.
    """

    env_id: str
    reference: str
    tasks_checked: list[str]
    tasks_total: int
    results: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[CheckResult]:
        return [result for result in self.results if result.status == FAIL]

    @property
    def exit_code(self) -> int:
        """0 when every check passed (warnings, skips and known failures included), else 1."""
        return 0 if self.ok else 1

    def result(self, name: str) -> CheckResult:
        """The result of check ``name``; ``KeyError`` naming the checks that ran."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(f"no check {name!r} in the report of {self.env_id}; it has: {', '.join(self.names)}")

    @property
    def names(self) -> list[str]:
        return [result.name for result in self.results]

    def sorted_results(self) -> list[CheckResult]:
        """Failures first, then known failures, warnings, passes and skips (stable within each)."""
        return sorted(self.results, key=lambda result: _ORDER.get(result.status, 5))

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "reference": self.reference,
            "ok": self.ok,
            "tasks_checked": list(self.tasks_checked),
            "tasks_total": self.tasks_total,
            "seconds": round(self.seconds, 3),
            "results": [result.to_dict() for result in self.results],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckReport:
        results = [
            CheckResult(
                entry["name"],
                entry["status"],
                entry["summary"],
                list(entry.get("findings", [])),
                dict(entry.get("metrics", {})),
                entry.get("reason", ""),
            )
            for entry in data.get("results", [])
        ]
        return cls(
            data["env_id"],
            data.get("reference", data["env_id"]),
            list(data.get("tasks_checked", [])),
            int(data.get("tasks_total", 0)),
            results,
            float(data.get("seconds", 0.0)),
        )
