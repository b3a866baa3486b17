"""Training rows from run files: SFT rows of the passing trajectories, DPO pairs of each task's best and worst.

Conversations are rendered as the ``hf`` policy renders them (:mod:`._conversations`),
with the env's tools: described once per row, in the chat template's own way (its
``tools`` argument, or a Hermes system prompt for templates without tool support), never
once per turn. ``tool_schemas="short"`` keeps each tool's name, the first sentence of its
description and its parameters' names, types and required list (no parameter
descriptions, enums or examples); ``"names"`` keeps only names and required parameters.
Shorter rows train faster; the evaluation (``--policy hf:OUT``) still shows the model the
full schemas, so use it when the tools' names and parameters already say what they do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rolloutgym_protocol.attribution import NON_AGENT_PARTIES, party_of
from rolloutgym_protocol.errors import ConfigError

from ._conversations import RenderedConversation, render_conversation

__all__ = ["TOOL_SCHEMAS", "dpo_rows", "read_runs", "sft_rows", "shorten_tools"]


def read_runs(paths: Sequence[str | Path]) -> list[Any]:
    """Read run files; one clear error for a missing or unreadable file."""
    from rolloutgym.runs import read_run

    if not paths:
        raise ConfigError("give at least one run file (made by 'rolloutgym run ENV --policy P --out RUN.jsonl')")
    runs = []
    for path in paths:
        if not Path(path).is_file():
            raise ConfigError(f"no run file '{path}'; make one with 'rolloutgym run ENV --policy P --out {path}'")
        runs.append(read_run(path))
    return runs


def run_env(run: Any) -> str:
    """What builds ``run``'s env here: the env it was recorded from (``rolloutgym.sources.resolve_recorded``),
    as an id (an env file's env is adopted by the registry under its ``file/...`` id) or a served env's URL."""
    from rolloutgym.sources import is_env_url, resolve_recorded

    options = run.header.get("options") or {}
    resolved = resolve_recorded(run.header["env"], env_kwargs=options.get("env_kwargs"), run_path=run.path)
    return resolved.origin if is_env_url(resolved.origin) else resolved.env_id


TOOL_SCHEMAS = ("full", "short", "names")


def _first_sentence(text: Any) -> str:
    text = str(text or "").strip()
    for end in (". ", ".\n", "\n"):
        if end in text:
            return text[: text.index(end) + 1].strip()
    return text


def _short_parameters(parameters: Any, keep_types: bool) -> dict[str, Any]:
    if not isinstance(parameters, Mapping):
        return {"type": "object", "properties": {}}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), Mapping) else {}
    short: dict[str, Any] = {"type": "object"}
    if keep_types:
        short["properties"] = {
            name: {"type": spec["type"]} if isinstance(spec, Mapping) and "type" in spec else {}
            for name, spec in properties.items()
        }
    if parameters.get("required"):
        short["required"] = list(parameters["required"])
    return short


def shorten_tools(tools: Sequence[Mapping[str, Any]], mode: str = "short") -> list[dict[str, Any]]:
    """``tools`` with shorter schemas: ``"full"`` (unchanged), ``"short"`` or ``"names"`` (module docstring)."""
    if mode not in TOOL_SCHEMAS:
        raise ConfigError(f"--tool-schemas {mode!r}: use one of {', '.join(TOOL_SCHEMAS)}")
    if mode == "full":
        return [dict(tool) for tool in tools]
    shortened = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        entry: dict[str, Any] = {"name": function.get("name", "")}
        if mode == "short" and function.get("description"):
            entry["description"] = _first_sentence(function["description"])
        entry["parameters"] = _short_parameters(function.get("parameters"), keep_types=mode == "short")
        shortened.append({"type": "function", "function": entry} if "function" in tool else entry)
    return shortened


class _Renderer:
    """One renderer per tokenizer and one tool list per (env, task)."""

    def __init__(self, tokenizer: Any, tool_schemas: str = "full") -> None:
        from rolloutgym.llm import ChatTemplateRenderer

        shorten_tools([], tool_schemas)  # refuse an unknown mode before any rendering
        self.renderer = ChatTemplateRenderer(tokenizer)
        self.tool_schemas = tool_schemas
        self._tools: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def tools(self, env_id: str, task_id: str) -> list[dict[str, Any]]:
        key = (env_id, task_id)
        if key not in self._tools:
            import rolloutgym as rg
            from rolloutgym.llm import env_tools

            environment = rg.make(env_id, task=task_id)
            try:
                self._tools[key] = shorten_tools(env_tools(environment), self.tool_schemas)
            finally:
                environment.close()
        return self._tools[key]

    def render(self, env_id: str, task_id: str, trajectory: Any) -> RenderedConversation | None:
        from rolloutgym.export import conversation

        return render_conversation(
            self.renderer, conversation(trajectory, openai_format=False), self.tools(env_id, task_id)
        )


def _agents(score: Any) -> bool:
    """Whether a score is the agent's (no attribution to the user, the env or the grader)."""
    return party_of(score) not in NON_AGENT_PARTIES


def sft_rows(
    runs: Sequence[Any], tokenizer: Any, *, min_score: float | None = None, tool_schemas: str = "full"
) -> list[dict[str, Any]]:
    """Pre-tokenized SFT rows (``input_ids``, ``completion_mask``) of the passing trajectories
    (``tool_schemas``: ``full``, ``short`` or ``names``; the module docstring). A pass attributed to
    someone other than the agent (a user that leaked its goal) is not an example to imitate."""
    renderer = _Renderer(tokenizer, tool_schemas)
    rows: list[dict[str, Any]] = []
    for run in runs:
        env = run_env(run)
        threshold = float(min_score if min_score is not None else run.header.get("pass_threshold") or 1.0)
        for group in run.groups:
            for trajectory, score in zip(group.trajectories, group.scores, strict=True):
                if score.value < threshold or party_of(score) in NON_AGENT_PARTIES:  # a pass the user leaked
                    continue
                rendered = renderer.render(env, group.item_id, trajectory)
                if rendered is None:
                    continue
                rows.append(
                    {
                        "input_ids": rendered.prompt_ids + rendered.completion_ids,
                        "completion_mask": [0] * len(rendered.prompt_ids) + rendered.completion_mask,
                    }
                )
    if not rows:
        described = ", ".join(str(run.path) for run in runs)
        raise ConfigError(
            f"no passing trajectories in {described} (a trajectory passes with score >= "
            f"{min_score if min_score is not None else 'the run pass threshold, usually 1.0'}); SFT needs examples to "
            "imitate: run a stronger policy (e.g. --policy oracle), more episodes (-n), or lower --min-score"
        )
    return rows


def dpo_rows(
    runs: Sequence[Any], tokenizer: Any, *, margin: float = 0.0, tool_schemas: str = "full"
) -> list[dict[str, Any]]:
    """Text preference rows (``prompt``, ``chosen``, ``rejected``): per task, the best and the
    worst trajectory when their rewards differ by more than ``margin`` (``tool_schemas``: as in
    :func:`sft_rows`), among the trajectories whose score is the agent's (not attributed to the
    user, the env or the grader)."""
    renderer = _Renderer(tokenizer, tool_schemas)
    decode = tokenizer.decode
    rows: list[dict[str, Any]] = []
    groups_seen = 0
    for run in runs:
        env = run_env(run)
        for group in run.groups:
            groups_seen += 1
            ranked = sorted(  # episodes attributed to the user, the env or the grader rank nothing
                [pair for pair in zip(group.trajectories, group.scores, strict=True) if _agents(pair[1])],
                key=lambda pair: pair[1].value,
                reverse=True,
            )
            if len(ranked) < 2 or ranked[0][1].value - ranked[-1][1].value <= margin:
                continue
            better = renderer.render(env, group.item_id, ranked[0][0])
            worse = renderer.render(env, group.item_id, ranked[-1][0])
            if better is None or worse is None:
                continue
            rows.append(
                {
                    "prompt": decode(better.prompt_ids),
                    "chosen": decode(better.completion_ids),
                    "rejected": decode(worse.completion_ids),
                }
            )
    if not rows:
        raise ConfigError(
            f"no reward variance: in {groups_seen} task group(s), no task has two trajectories whose rewards differ "
            f"by more than {margin:g}, so DPO has no preference pair. Run more episodes per task with sampling "
            "(e.g. 'rolloutgym run ENV --policy hf:MODEL -n 4 --policy-arg temperature=1.0 --out RUN.jsonl')"
        )
    return rows
