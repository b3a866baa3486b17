"""The code-editing tools: OpenAI-style definitions and pydantic argument models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["TOOL_ARGUMENTS", "TOOLS", "parse_arguments"]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ListFiles(_Arguments):
    path: str = Field(".", description="A directory (or file) relative to the workspace root; default: everything.")


class ReadFile(_Arguments):
    path: str = Field(description="File path relative to the workspace root, e.g. 'src/app.py'.")
    start_line: int | None = Field(None, ge=1, description="First line to return (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line to return (inclusive).")


class WriteFile(_Arguments):
    path: str = Field(description="File path relative to the workspace root; parent directories are created.")
    content: str = Field(description="The complete new content of the file.")


class StrReplace(_Arguments):
    path: str = Field(description="File path relative to the workspace root.")
    old_str: str = Field(description="Text that occurs exactly once in the file, copied exactly (whitespace included).")
    new_str: str = Field(description="The replacement text.")


class ApplyPatch(_Arguments):
    patch: str = Field(description="A unified diff ('--- a/PATH', '+++ b/PATH', '@@' hunks); all files change or none.")


class DeleteFile(_Arguments):
    path: str = Field(description="File path relative to the workspace root.")


class RunTests(_Arguments):
    path: str | None = Field(
        None, description="A test file or directory to run; default: the repository's visible tests."
    )


class Submit(_Arguments):
    message: str = Field("", description="Optional summary of what you changed.")


TOOL_ARGUMENTS: dict[str, type[_Arguments]] = {
    "list_files": ListFiles,
    "read_file": ReadFile,
    "write_file": WriteFile,
    "str_replace": StrReplace,
    "apply_patch": ApplyPatch,
    "delete_file": DeleteFile,
    "run_tests": RunTests,
    "submit": Submit,
}

_DESCRIPTIONS = {
    "list_files": "List the files of the repository (paths relative to its root).",
    "read_file": "Read a file, optionally only lines start_line..end_line.",
    "write_file": "Create or overwrite a file with the given content.",
    "str_replace": "Replace the one occurrence of old_str in a file with new_str.",
    "apply_patch": "Apply a unified diff to the repository.",
    "delete_file": "Delete a file.",
    "run_tests": "Run the repository's visible tests (pytest) in a sandbox and show the results.",
    "submit": "Finish: submit the repository in its current state for grading.",
}


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    properties = {}
    for name, definition in schema.get("properties", {}).items():
        definition = dict(definition)
        definition.pop("title", None)
        if "anyOf" in definition:  # Optional[...]: keep the non-null branch for simple tool schemas
            branches = [branch for branch in definition.pop("anyOf") if branch.get("type") != "null"]
            definition.update(branches[0])
        definition.pop("default", None)
        properties[name] = definition
    return {
        "type": "object",
        "properties": properties,
        "required": schema.get("required", []),
        "additionalProperties": False,
    }


TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": name, "description": _DESCRIPTIONS[name], "parameters": _schema(model)}}
    for name, model in TOOL_ARGUMENTS.items()
]


def parse_arguments(name: str, arguments: Any) -> BaseModel:
    """Validate a tool call's arguments; ``ValueError`` with a readable message when invalid."""
    model = TOOL_ARGUMENTS[name]
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments of {name} must be a JSON object, got {type(arguments).__name__}")
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'arguments'}: {error['msg']}" for error in exc.errors()
        )
        expected = ", ".join(TOOLS[list(TOOL_ARGUMENTS).index(name)]["function"]["parameters"]["properties"])
        raise ValueError(f"invalid arguments for {name}: {problems} (parameters: {expected})") from None
