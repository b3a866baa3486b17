"""``rolloutgym export RUN --format otel``: a run as OpenTelemetry traces (OTLP/JSON lines).

Each line is parsed by the OpenTelemetry protobuf definitions (``opentelemetry-proto``, the
wire format's own schema) when installed, and checked as plain JSON either way: one trace per
episode, a root span with the outcome and attribution, one child span per step.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import app
from typer.testing import CliRunner


def _attributes(span: dict) -> dict:
    return {item["key"]: next(iter(item["value"].values())) for item in span["attributes"]}


def test_a_run_exports_as_one_trace_per_episode(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    rg.run("toy/guess-v0", policy="random", num_rollouts=3, limit=4, seed=1, out=str(run))
    lines = run.read_text().splitlines()
    group = json.loads(lines[1])  # task 0's first episode: a failure the env blames on the user
    group["scores"][0]["metadata"]["attribution"] = {"party": "user", "reason": "ended_early", "evidence": "quit"}
    group["errors"] = [{"error_type": "TimeoutError", "error_message": "slow", "where": "policy", "member": 3}]
    lines[1] = json.dumps(group)
    run.write_text("\n".join(lines) + "\n")
    out = tmp_path / "traces.otlp.jsonl"
    result = CliRunner().invoke(app, ["export", str(run), "--format", "otel", "-o", str(out)])
    assert result.exit_code == 0, result.output
    requests = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(requests) == 4
    spans = requests[0]["resourceSpans"][0]["scopeSpans"][0]["spans"]
    roots = [span for span in spans if "parentSpanId" not in span]
    assert len(roots) == 3 + 1 and len({span["traceId"] for span in roots}) == 4  # 3 episodes, 1 failed member
    first = _attributes(roots[0])
    assert first["rolloutgym.attribution.party"] == "user" and first["rolloutgym.attribution.reason"] == "ended_early"
    assert first["rolloutgym.env.id"] == "toy/guess-v0" and "rolloutgym.reward" in first
    steps = [span for span in spans if span.get("parentSpanId") == roots[0]["spanId"]]
    assert steps and all(span["traceId"] == roots[0]["traceId"] for span in steps)
    assert len(steps) == int(first["rolloutgym.steps"])
    assert roots[-1]["status"] == {"code": 2, "message": "slow"}
    again = tmp_path / "again.otlp.jsonl"
    CliRunner().invoke(app, ["export", str(run), "--format", "otel", "-o", str(again)])
    assert again.read_text() == out.read_text()  # ids come from the run, task and member

    json_format = pytest.importorskip("google.protobuf.json_format")
    trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    for line in out.read_text().splitlines():
        request = json_format.Parse(line, trace_service.ExportTraceServiceRequest())
        assert request.resource_spans[0].scope_spans[0].spans
