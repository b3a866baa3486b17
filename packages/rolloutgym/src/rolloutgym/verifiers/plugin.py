"""Hook implementations that register the verifier primitives (entry point ``verifiers``)."""

from __future__ import annotations

from rolloutgym_protocol import GraderSpec, hookimpl

_PRIMITIVES = {
    "state_match": "Dot paths in the final state hold the expected values (`a.b[0].c`, `.length`, `\\.` escapes).",
    "contains_terms": "Every term occurs in the final answer (or, with field='state', the state JSON).",
    "tool_was_called": "A tool was called, optionally with matching arguments and a count.",
    "no_tool_errors": "No tool call returned an error.",
    "final_answer": "The agent ended with a non-empty final answer.",
    "ground_truth_match": "The task's hidden_ground_truth holds in the final state; feedback is a state diff.",
    "llm_judge": "A judge policy scores the final answer against a rubric (needs --env-arg judge=...).",
}


@hookimpl
def rolloutgym_graders() -> list[GraderSpec]:
    return [
        GraderSpec(name, f"rolloutgym.verifiers.primitives:{name}", description)
        for name, description in _PRIMITIVES.items()
    ]
