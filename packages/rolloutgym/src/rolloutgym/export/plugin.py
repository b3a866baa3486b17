"""Hook implementations registering the training-data exporters (entry point ``export``)."""

from __future__ import annotations

from rolloutgym_protocol import ExporterSpec, hookimpl


@hookimpl
def rolloutgym_exporters() -> list[ExporterSpec]:
    return [
        ExporterSpec(
            "tokens",
            "rolloutgym.export.tokens:export_tokens",
            "RL sequences: input ids, loss mask, sampled logprobs, reward and group-relative advantage per trajectory.",
        ),
        ExporterSpec(
            "sft",
            "rolloutgym.export.chat:export_sft",
            "Passing trajectories as chat JSONL (OpenAI fine-tuning format).",
        ),
        ExporterSpec(
            "dpo",
            "rolloutgym.export.chat:export_dpo",
            "Chosen/rejected trajectory pairs of the same task (OpenAI preference format or TRL).",
        ),
        ExporterSpec(
            "hf",
            "rolloutgym.export.hf:export_hf",
            "A Hugging Face datasets.Dataset saved to disk (or Parquet when the output ends in .parquet).",
            extension="",
        ),
        ExporterSpec(
            "otel",
            "rolloutgym.export.traces:export_otel",
            "OpenTelemetry traces (OTLP/JSON, one request per task group): a span per episode and per step.",
            extension=".otlp.jsonl",
        ),
        ExporterSpec(
            "tinker",
            "rolloutgym.export.tokens:export_tinker",
            "Tinker Datum records (model_input + loss_fn_inputs) for RL or SFT.",
        ),
    ]
