"""The rollout SDK's template builders: plain dict builders with its names and JSON shapes.

They validate nothing themselves (as in the SDK); :class:`Environment` validates the
assembled config and reports problems with their paths.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "action_tool",
    "browser_config",
    "browser_page",
    "code_editing_config",
    "custom_config",
    "custom_tool",
    "lookup_tool",
    "mock_tool",
    "primitive",
    "verifier_config",
    "workflow_config",
]


def lookup_tool(
    name: str, *, from_array: str, match_field: str, description: str, params_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``workflow`` lookup tool: find the entry of ``from_array`` whose ``match_field`` equals the argument."""
    return {
        "kind": "lookup",
        "name": name,
        "description": description,
        "paramsSchema": params_schema or {},
        "fromArray": from_array,
        "matchField": match_field,
    }


def action_tool(
    name: str, *, state_array: str, description: str, params_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``workflow`` action tool: append the call's arguments to the state array ``state_array``."""
    return {
        "kind": "action",
        "name": name,
        "description": description,
        "paramsSchema": params_schema or {},
        "stateArray": state_array,
    }


def mock_tool(
    name: str, *, description: str, response: Any = None, params_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``workflow`` mock tool: always returns ``response``."""
    return {
        "kind": "mock",
        "name": name,
        "description": description,
        "paramsSchema": params_schema or {},
        "response": response,
    }


def workflow_config(
    *,
    tools: list[dict[str, Any]],
    fixtures: dict[str, Any] | None = None,
    initial_mutable_state: dict[str, Any] | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """A ``workflow`` config; keys whose value is None are omitted."""
    config: dict[str, Any] = {"tools": tools}
    if description is not None:
        config["description"] = description
    if fixtures is not None:
        config["fixtures"] = fixtures
    if initial_mutable_state is not None:
        config["initialMutableState"] = initial_mutable_state
    return config


def custom_tool(
    name: str,
    *,
    description: str,
    params_schema: dict[str, Any] | None = None,
    response: Any = None,
    mutates: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``custom`` tool: templated ``response``, optional ``mutates={"path": ..., "value"?: ...}``."""
    tool = {"name": name, "description": description, "paramsSchema": params_schema or {}, "response": response}
    if mutates is not None:
        tool["mutates"] = mutates
    return tool


def custom_config(
    *, tools: list[dict[str, Any]], initial_state: dict[str, Any] | None = None, description: str | None = None
) -> dict[str, Any]:
    """A ``custom`` config; keys whose value is None are omitted."""
    config: dict[str, Any] = {"tools": tools}
    if description is not None:
        config["description"] = description
    if initial_state is not None:
        config["initialState"] = initial_state
    return config


def code_editing_config(*, files: dict[str, str], description: str | None = None) -> dict[str, Any]:
    """A ``code-editing`` config: ``files`` maps paths to contents."""
    config: dict[str, Any] = {"files": files}
    if description is not None:
        config["description"] = description
    return config


def browser_page(url: str, *, title: str, elements: list[Any]) -> dict[str, Any]:
    """One ``browser`` page."""
    return {"url": url, "title": title, "elements": elements}


def browser_config(*, initial_url: str, pages: list[dict[str, Any]], description: str | None = None) -> dict[str, Any]:
    """A ``browser`` config."""
    config: dict[str, Any] = {"initialUrl": initial_url, "pages": pages}
    if description is not None:
        config["description"] = description
    return config


def primitive(name: str, type: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002 - the SDK's parameter name
    """A verifier primitive: ``{"name", "type", **params}`` (``weight`` defaults to 1)."""
    return {"name": name, "type": type, **kwargs}


def verifier_config(
    *primitives: dict[str, Any], threshold: float | None = None, scoring: str | None = None
) -> dict[str, Any]:
    """A verifier: ``{"primitives": [...]}``, plus rolloutgym's optional ``threshold`` and ``scoring``.

    ``threshold`` (0..1): the weighted fraction of passing primitives needed to pass
    (default: every primitive must pass). ``scoring``: ``"weighted"`` (the reward is the
    weighted fraction, the SDK's) or ``"binary"`` (1 when passed, else 0).
    """
    config: dict[str, Any] = {"primitives": list(primitives)}
    if threshold is not None:
        config["threshold"] = threshold
    if scoring is not None:
        config["scoring"] = scoring
    return config
