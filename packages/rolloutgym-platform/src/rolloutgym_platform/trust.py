"""What a key may make a worker execute: the platform's trust rules, one place, used at submit and on the worker.

Scopes (``rolloutgym platform keys create --scope``):

* ``run``: queue runs of the organisation's envs with a **vetted** policy: a built-in policy that runs no code
  and reads no file (``oracle``, ``null``, ``random``, ``chaos``), a model-serving provider given a model *name*
  (``hf``, ``openai``, ``vllm``, ``tinker``; sampling options only), ``job:JOB_ID`` (a model the organisation
  trained) or ``replay:RUN_ID`` (a run of the organisation), over an env that runs no code: a registered env id,
  or a pushed JSON env file of a data-only template (``workflow``/``custom`` without an MCP server, ``sql`` with
  its schema and seed).
* ``push``: push env files, and run what runs code on a worker: a Python env file, a JSON env file with an MCP
  server or a template that runs code (``code-editing``, ``browser``, ``harbor``, a plugin's), the ``harness``
  provider and every other policy provider, provider options beyond sampling (``base_url``, ``engine_args``,
  ``tokenizer``, ...). Such code runs with the worker's rights: give ``push`` only to people you would let log in
  to the workers.
* ``train``: queue training jobs on the organisation's runs (a base model by name, options from an allow-list).

Nothing here names a file: a policy refers to the organisation's runs and jobs by id, never by path (``replay:PATH``
and ``hf:PATH`` are refused for every key), so a reference resolves inside the organisation's storage by
construction. The API answers a rule broken with 403 naming the scope needed (:class:`TrustError`) or 400 for a
malformed value; the worker checks the same rules again before it executes a run (:func:`check_run`).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

__all__ = [
    "CODE_SCOPE",
    "DATA_POLICIES",
    "MAY_RUN_CODE",
    "MODEL_PROVIDERS",
    "SAMPLING_OPTIONS",
    "TrustError",
    "check_base_model",
    "check_job_options",
    "check_run",
    "env_runs_code",
    "needs_scope",
    "policy_reference",
    "policy_runs_code",
]

CODE_SCOPE = "push"
"""The scope a key needs for anything that runs code on a worker."""

MAY_RUN_CODE = "may_run_code"
"""The run option the API records: whether the key that queued the run held :data:`CODE_SCOPE`."""

DATA_POLICIES = frozenset({"oracle", "null", "random", "chaos"})
"""Built-in policies that run no code and read no file."""

MODEL_PROVIDERS = frozenset({"hf", "openai", "vllm", "tinker"})
"""Model-serving providers: the part after the colon is a model name, never a path."""

SAMPLING_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "max_new_tokens",
        "max_turns",
        "max_seq_len",
        "seed",
        "stop",
        "greedy",
        "presence_penalty",
        "frequency_penalty",
        "repetition_penalty",
        "logprobs",
        "top_logprobs",
        "keep_thinking",
        "final_after",
    }
)
"""Policy options a ``run`` key may give: how to sample, never where from (no URL, path, engine or template)."""

DATA_TEMPLATES = frozenset({"workflow", "custom", "sql"})
"""Templates whose env files are data (``workflow``/``custom`` without ``mcp``, ``sql`` without ``database``)."""

JOB_OPTIONS = frozenset(
    {
        "steps",
        "epochs",
        "learning_rate",
        "batch_size",
        "lora",
        "seed",
        "beta",
        "margin",
        "min_score",
        "num_generations",
        "prompts_per_step",
        "max_tokens",
        "max_turns",
        "temperature",
        "split",
        "mode",
        "threads",
        "dynamic_sampling",
        "select_tasks",
        "micro_batch",
        "eval_rollouts",
        "eval_limit",
    }
)
"""Training job options (each becomes a ``rolloutgym train`` flag): hyper-parameters, never paths or models."""

MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+:@-]{0,127}(?:/[A-Za-z0-9][A-Za-z0-9_.+:@-]{0,127})?$")
"""A model name as a hub or a server spells it (``tiny``, ``gpt-4o-mini``, ``Qwen/Qwen3-0.6B``,
``ft:gpt-4o-mini:org::id``, ``llama3:8b``): no path (at most one ``/``, no leading ``.``, ``/`` or ``~``), no ``..``."""

ROW_ID = re.compile(r"^(?:run|job)_[0-9a-f]{12}$")
_PROVIDER = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_MAX_POLICY = 300


class TrustError(Exception):
    """A request the key's scopes (403) or the platform's rules (400) do not allow; the message says the fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _needs_push(what: str) -> TrustError:
    return TrustError(
        403,
        f"{what} runs code on a worker, which needs the {CODE_SCOPE!r} scope; mint a key with "
        f"'rolloutgym platform keys create --scope run,{CODE_SCOPE}', or choose a vetted policy "
        f"({', '.join(sorted(DATA_POLICIES | MODEL_PROVIDERS))}:MODEL, job:JOB_ID, replay:RUN_ID)",
    )


def needs_scope(reason: str) -> str:
    """The 403 message for ``reason`` (what runs code): it names the scope needed and the vetted choices."""
    return _needs_push(reason).message


def _is_model_name(name: str) -> bool:
    return bool(MODEL_NAME.match(name)) and ".." not in name


def policy_reference(policy: Any) -> tuple[str, str]:
    """``(provider, rest)`` of a policy string, checked for shape (400 otherwise): printable, at most 300
    characters, a lower-case provider name; ``replay:`` and ``job:`` take an id, never a path."""
    if not isinstance(policy, str) or not policy:
        raise TrustError(400, "give a model or policy, e.g. model='hf:tiny' or 'openai:gpt-4o-mini'")
    if len(policy) > _MAX_POLICY or not policy.isprintable() or any(c.isspace() for c in policy):
        raise TrustError(400, f"the policy {policy[:60]!r} is not usable: at most {_MAX_POLICY} printable characters")
    provider, _, rest = policy.partition(":")
    if not _PROVIDER.match(provider):
        raise TrustError(400, f"the policy {policy[:60]!r} has no provider name, e.g. openai:gpt-4o-mini or oracle")
    if provider in ("replay", "job") and not ROW_ID.match(rest):
        kind = "run" if provider == "replay" else "job"
        raise TrustError(
            400,
            f"{provider}: takes the id of one of your organisation's {kind}s ({provider}:{kind}_...), never a "
            "path: files on the platform are reached only through the ids that own them",
        )
    if provider == "human":
        raise TrustError(400, "the human policy reads a terminal; a worker has none: choose a model or a policy")
    if provider in MODEL_PROVIDERS and not _is_model_name(rest):
        raise TrustError(
            400,
            f"{provider}: takes a model name such as {provider}:tiny or {provider}:Org/Model, not {rest[:60]!r}: a "
            "path names a file on the server; a model your organisation trained is job:JOB_ID",
        )
    return provider, rest


def _check_option_value(name: str, value: Any, depth: int = 0) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value) or abs(value) > 1e12:
            raise TrustError(400, f"policy option {name}={value!r} is not a finite number of a sane size")
        return
    if isinstance(value, str):
        if len(value) > 500:
            raise TrustError(400, f"policy option {name} is longer than 500 characters")
        return
    if isinstance(value, list) and depth == 0 and len(value) <= 32:
        for item in value:
            _check_option_value(name, item, depth + 1)
        return
    raise TrustError(400, f"policy option {name} must be a number, a string, true/false or a short list of them")


def policy_runs_code(policy: str, options: Any) -> str | None:
    """What, in the policy and its options, runs code (or reaches beyond the org's data) on a worker; None when it
    is vetted for a ``run`` key. Malformed values raise :class:`TrustError` (400)."""
    provider, _ = policy_reference(policy)
    if options is not None and not isinstance(options, dict):
        raise TrustError(400, "policy_options must be a JSON object of option names and values")
    options = options or {}
    if len(options) > 64:
        raise TrustError(400, "policy_options has more than 64 entries")
    if provider not in DATA_POLICIES | MODEL_PROVIDERS | {"job", "replay"}:
        return f"the policy provider {provider!r}"
    for name, value in options.items():
        if name not in SAMPLING_OPTIONS:
            return f"the policy option {str(name)[:60]!r} (only sampling options are vetted: temperature, top_p, ...)"
        _check_option_value(name, value)
    return None


def _payloads(text: str, name: str) -> list[Any]:
    """The Environment payloads of a JSON (one object) or JSONL (one per line) env file's text."""
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def _payload_runs_code(payload: Any) -> str | None:
    if not isinstance(payload, dict) or "template" not in payload:
        return None  # a task row (tasks-only JSONL): data
    template = payload.get("template")
    if template not in DATA_TEMPLATES:
        return f"the template {str(template)[:40]!r} (only {', '.join(sorted(DATA_TEMPLATES))} are data)"
    config = payload.get("config")
    if isinstance(config, dict) and "mcp" in config:
        return "an MCP server (config.mcp: a command on the worker, or a URL it connects to)"
    if template == "sql" and ("database" in payload or (isinstance(config, dict) and "database" in config)):
        return "a database file (config.database names a file on the server; give schema and seed)"
    return None


def env_runs_code(folder: Path, kind: str, entry: str, files: list[str]) -> str | None:
    """What, in a pushed env version, runs code on a worker (None: data only, or a registered id).

    ``folder`` holds the version's files. A version is data when it is JSON with no Python file beside it and each
    of its Environment payloads uses a data template (:data:`DATA_TEMPLATES`) without an MCP server or a database
    file; everything else (Python, another template, an unreadable file) counts as code.
    """
    if kind == "id":
        return None  # a registered env: code the operator installed
    if kind != "json" or any(name.endswith((".py", ".pyc", ".pyw", ".so")) for name in files):
        return "a Python env file (imported by the worker)"
    for name in files:
        if not name.endswith((".json", ".jsonl")):
            continue
        try:
            payloads = _payloads((folder / name).read_text(encoding="utf-8"), name)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return f"the env file {name!r} (not readable as JSON)"
        for payload in payloads:
            reason = _payload_runs_code(payload)
            if reason is not None:
                return f"{reason} in {name}"
    return None


def check_base_model(base_model: Any) -> str:
    """A training job's base model: ``hf:NAME`` (a model name, never a path); 400 otherwise."""
    if not isinstance(base_model, str) or not base_model:
        raise TrustError(400, "give base_model, e.g. hf:tiny")
    if not base_model.startswith("hf:"):  # e.g. the rollout SDK's openai/gpt-4o-mini-2024-07-18 (issue 40)
        raise TrustError(
            400,
            f"base_model {base_model[:60]!r}: the platform fine-tunes local models with TRL; give hf:tiny, "
            "hf:smollm2 or hf:Org/Model (hosted fine-tuning such as OpenAI's or Together's is not run here)",
        )
    provider, _ = policy_reference(base_model)
    if provider != "hf":
        raise TrustError(400, f"base_model {base_model[:60]!r}: train from a model name, e.g. hf:tiny or hf:Org/Model")
    return base_model


def check_job_options(options: Any) -> dict[str, Any]:
    """A training job's options: hyper-parameters from :data:`JOB_OPTIONS` with scalar values; 400 otherwise
    (each option becomes a command-line flag of ``rolloutgym train``: no name may choose a path or a model)."""
    if options is None:
        return {}
    if not isinstance(options, dict) or len(options) > 32:
        raise TrustError(400, "options must be a JSON object of at most 32 training options, e.g. {'steps': 10}")
    for name, value in options.items():
        if name not in JOB_OPTIONS:
            known = ", ".join(sorted(JOB_OPTIONS))
            raise TrustError(400, f"unknown training option {str(name)[:60]!r}; known: {known}")
        if isinstance(value, (list, dict)) or isinstance(value, str) and (len(value) > 100 or value.startswith("-")):
            raise TrustError(400, f"training option {name} must be a number, true/false or a short word")
        _check_option_value(name, value)
    return options


def check_run(policy: str, policy_options: Any, folder: Path, kind: str, entry: str, files: list[str]) -> None:
    """The worker's check of a run queued without the ``push`` scope: raises PermissionError when its policy or env
    runs code (the API refused it at submit; this holds even for a row written some other way)."""
    try:
        reason = policy_runs_code(policy, policy_options) or env_runs_code(folder, kind, entry, files)
    except TrustError as refused:
        raise PermissionError(refused.message) from None
    if reason is not None:
        raise PermissionError(f"{reason} runs code on a worker, and this run was queued without the push scope")
