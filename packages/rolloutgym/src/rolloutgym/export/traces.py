"""A run as OpenTelemetry traces: ``rolloutgym export RUN --format otel`` (OTLP/JSON, one request per line).

Each line is an OTLP ``ExportTraceServiceRequest`` in the protobuf JSON encoding (the format of
the OpenTelemetry file exporter and of ``POST /v1/traces``), one per task group, so any OTLP
consumer (an OpenTelemetry Collector's ``otlpjsonfile`` receiver, MLflow's and Phoenix's OTLP
endpoints, Jaeger) reads it. Per episode, one trace:

* a root span ``episode ENV TASK#MEMBER`` with the episode's outcome as attributes
  (``rolloutgym.reward``, ``rolloutgym.passed``, ``rolloutgym.stop_reason``, the score's feedback
  and components, and its attribution: ``rolloutgym.attribution.party`` / ``.reason`` /
  ``.evidence``); a failed member is a root span with status ERROR and the error;
* one child span per step (``step N``) with the action and observation (cut to 2,000
  characters), the step reward, and token counts as ``gen_ai.usage.output_tokens`` /
  ``gen_ai.usage.input_tokens`` where recorded.

Times: a run file records each episode's duration (``elapsed_seconds``), not when each step
ran, so episodes start at the run's ``created_at`` and steps share their episode's duration
equally (``rolloutgym.timing = "apportioned"`` says so). Ids are derived from the run id, task
and member, so exporting twice gives the same traces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.attribution import attribution_of
from rolloutgym_protocol.display import json_text, safe_repr

from ..mixtures import env_of_group
from ..runs import Run
from ._common import write_jsonl

__all__ = ["export_otel"]

_TEXT = 2000
_OK, _ERROR = 1, 2  # OTLP StatusCode
_INTERNAL = 1  # OTLP SpanKind


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    text = value if isinstance(value, str) else json_text(value, default=safe_repr)
    return {"stringValue": text[:_TEXT]}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in values.items() if value is not None]


def _id(*parts: Any, size: int) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[: size * 2]


def _span(trace: str, span: str, parent: str | None, name: str, start: int, end: int, **extra: Any) -> dict[str, Any]:
    data = {"traceId": trace, "spanId": span, "name": name, "kind": _INTERNAL}
    data.update(startTimeUnixNano=str(start), endTimeUnixNano=str(end), **extra)
    if parent is not None:
        data["parentSpanId"] = parent
    return data


def _episode_spans(trace: str, root: str, trajectory: Trajectory, score: Any, start: int) -> list[dict[str, Any]]:
    seconds = float(trajectory.metadata.get("elapsed_seconds") or 0.0)
    end = start + int(seconds * 1e9)
    found = attribution_of(score)
    outcome = {
        "rolloutgym.reward": float(score.value),
        "rolloutgym.stop_reason": trajectory.stop_reason,
        "rolloutgym.steps": len(trajectory.steps),
        "rolloutgym.score.feedback": score.feedback,
        "rolloutgym.score.components": {name: child.value for name, child in score.components.items()} or None,
        "rolloutgym.attribution.party": None if found is None else found.party,
        "rolloutgym.attribution.reason": None if found is None else found.reason,
        "rolloutgym.attribution.evidence": None if found is None else found.evidence,
        "rolloutgym.timing": "apportioned",
    }
    spans = [(outcome, start, end)]
    share = (end - start) // max(len(trajectory.steps), 1)
    for index, step in enumerate(trajectory.steps):
        values = {
            "rolloutgym.step": index,
            "rolloutgym.action": step.action,
            "rolloutgym.observation": step.next_observation,
            "rolloutgym.step.reward": float(step.reward),
            "gen_ai.usage.output_tokens": None if step.policy_tokens is None else len(step.policy_tokens),
            "gen_ai.usage.input_tokens": None if step.observation_tokens is None else len(step.observation_tokens),
            "rolloutgym.policy_stop_reason": step.policy_stop_reason,
        }
        spans.append((values, start + index * share, start + (index + 1) * share))
    result = []
    for number, (values, begin, finish) in enumerate(spans):
        name = "episode" if number == 0 else f"step {number - 1}"
        span_id = root if number == 0 else _id(trace, number, size=8)
        parent = None if number == 0 else root
        result.append(
            _span(trace, span_id, parent, name, begin, finish, attributes=_attributes(values), status={"code": _OK})
        )
    return result


def _requests(run: Run) -> Iterator[dict[str, Any]]:
    header = run.header
    created = datetime.fromisoformat(str(header.get("created_at")).replace("Z", "+00:00"))
    start = int(created.timestamp() * 1e9)
    resource = _attributes(
        {
            "service.name": "rolloutgym",
            "rolloutgym.run_id": header.get("run_id"),
            "rolloutgym.policy": header.get("policy"),
            "rolloutgym.env.id": header.get("env", {}).get("id"),
        }
    )
    threshold = float(header.get("pass_threshold", 1.0))
    for group in run.groups:
        env_id = env_of_group(group, header)
        spans = []
        for index, (trajectory, score) in enumerate(zip(group.trajectories, group.scores, strict=True)):
            member = int(trajectory.metadata.get("member", index))
            trace = _id(header.get("run_id"), group.item_id, member, size=16)
            root = _id(trace, "root", size=8)
            episode = _episode_spans(trace, root, trajectory, score, start)
            episode[0]["name"] = f"episode {env_id} {group.item_id}#{member}"
            episode[0]["attributes"] = (
                _attributes(
                    {"rolloutgym.env.id": env_id, "rolloutgym.task.id": group.item_id, "rolloutgym.member": member}
                )
                + episode[0]["attributes"]
                + _attributes({"rolloutgym.passed": score.value >= threshold})
            )
            spans.extend(episode)
        for error in group.errors:
            trace = _id(header.get("run_id"), group.item_id, error.member, size=16)
            values = {
                "rolloutgym.env.id": env_id,
                "rolloutgym.task.id": group.item_id,
                "rolloutgym.member": error.member,
            }
            values.update({"rolloutgym.error.type": error.error_type, "rolloutgym.error.where": error.where})
            status = {"code": _ERROR, "message": error.error_message[:_TEXT]}
            name = f"episode {env_id} {group.item_id}#{error.member}"
            spans.append(
                _span(
                    trace,
                    _id(trace, "root", size=8),
                    None,
                    name,
                    start,
                    start,
                    attributes=_attributes(values),
                    status=status,
                )
            )
        scope = {"scope": {"name": "rolloutgym.export.traces"}, "spans": spans}
        yield {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [scope]}]}


def export_otel(run: Run, out_path: str | Path, **options: Any) -> Path:
    """One OTLP/JSON ``ExportTraceServiceRequest`` per task group (module docstring); no options."""
    if options:
        from rolloutgym_protocol.errors import ConfigError

        raise ConfigError(f"the otel export takes no options; got {', '.join(sorted(options))}")
    return write_jsonl(out_path, _requests(run), what="groups")
