"""The rollout SDK's ``code-editing`` template, run locally with real test execution.

An env file declares::

    Environment(
        slug="fix-add", name="Fix add", template="code-editing",
        config={"files": {"calc.py": "def add(a, b):\\n    return a - b\\n"}},
        tasks=[Task(
            instruction="add() subtracts; make it add.",
            hidden_ground_truth={
                "tests": {
                    "tests/test_hidden.py": "from calc import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n"
                },
                "files": {"calc.py": "def add(a, b):\\n    return a + b\\n"},   # optional: expected contents
                "solution": {"calc.py": "..."},                               # optional: what the oracle writes
            },
        )],
    )

``config`` keys: ``files`` (required), ``description``, ``defaultVerifier`` (the SDK's), and
our additions ``visible_tests`` (paths ``run_tests`` runs; default: every ``test_*.py`` /
``*_test.py`` in ``files``) and ``limits`` (:class:`~rolloutgym_code.sandbox.SandboxLimits`
fields). ``hidden_ground_truth`` keys: ``tests`` (hidden test files), ``files`` (expected
contents; ``None`` means the file must be deleted), ``solution`` (files the oracle writes when
the task has no ``reference_actions`` and no expected ``files``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol.errors import EnvFileError

from ._paths import check_relative_path
from .envs import CodeEditingEnv, CodeTask, visible_test_paths
from .sandbox import SandboxLimits

__all__ = ["compile_code_editing", "task_from_sdk"]

_GROUND_TRUTH_KEYS = {"tests", "files", "solution"}
_CONFIG_KEYS = {"files", "description", "defaultVerifier", "visible_tests", "limits"}


def _field(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _file_map(value: Any, where: str, *, allow_none: bool = False) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise EnvFileError(f"{where} must be a mapping of path -> file content, got {type(value).__name__}")
    checked: dict[str, Any] = {}
    for path, content in value.items():
        try:
            normalised = check_relative_path(path).as_posix()
        except ValueError as exc:
            raise EnvFileError(f"{where}[{path!r}]: {exc}") from None
        if content is None and allow_none:
            checked[normalised] = None
        elif not isinstance(content, str):
            expected = "a string (or None to require deletion)" if allow_none else "a string"
            raise EnvFileError(f"{where}[{path!r}] must be {expected}, got {type(content).__name__}")
        else:
            checked[normalised] = content
    return checked


def task_from_sdk(task: Any, index: int, config: Mapping[str, Any]) -> CodeTask:
    """Turn an SDK ``Task`` (object or mapping) into a :class:`CodeTask`."""
    identifier = _field(task, "id") or str(index)
    where = f"task {identifier!r}"
    ground_truth = _field(task, "hidden_ground_truth") or {}
    if not isinstance(ground_truth, Mapping):
        raise EnvFileError(f"{where}: hidden_ground_truth must be a mapping, got {type(ground_truth).__name__}")
    unknown = set(ground_truth) - _GROUND_TRUTH_KEYS
    if unknown:
        raise EnvFileError(
            f"{where}: unknown hidden_ground_truth keys {sorted(unknown)} for template 'code-editing'; "
            "use 'tests' (hidden test files), 'files' (expected contents) and 'solution' (files the oracle writes)"
        )
    files = _file_map(config["files"], "config.files")
    hidden = _file_map(ground_truth.get("tests", {}), f"{where}: hidden_ground_truth.tests")
    expected = _file_map(ground_truth.get("files", {}), f"{where}: hidden_ground_truth.files", allow_none=True)
    solution = _file_map(ground_truth.get("solution", {}), f"{where}: hidden_ground_truth.solution")
    clashes = sorted(set(hidden) & set(files))
    if clashes:
        raise EnvFileError(
            f"{where}: hidden tests {clashes} have the same paths as visible files; give hidden tests their own paths"
        )
    actions: list[dict[str, Any]] = [dict(action) for action in (_field(task, "reference_actions") or [])]
    if not actions and not expected:
        actions = [
            {"name": "write_file", "arguments": {"path": path, "content": content}}
            for path, content in sorted(solution.items())
        ]
    visible = config.get("visible_tests")
    if visible is not None and (not isinstance(visible, list) or not all(isinstance(path, str) for path in visible)):
        raise EnvFileError("config.visible_tests must be a list of paths")
    return CodeTask(
        id=str(identifier),
        split=str(_field(task, "split") or "dev"),
        instruction=_field(task, "instruction"),
        files=files,
        hidden_tests=hidden,
        visible_tests=visible_test_paths(files, visible),
        expected_files=expected,
        reference_actions=tuple(actions),
        input=_field(task, "input"),
        metadata=dict(_field(task, "metadata") or {}),
    )


def compile_code_editing(environment: Any) -> Callable[..., CodeEditingEnv]:
    """``compile(environment) -> factory(task, **kwargs)`` for the ``code-editing`` template.

    ``environment`` is duck-typed: ``slug``, ``name``, ``config``, ``tasks``, ``description``
    and ``verifier`` (or ``config["defaultVerifier"]``) are read.
    """
    config = _field(environment, "config")
    if not isinstance(config, Mapping) or "files" not in config:
        raise EnvFileError("template 'code-editing' needs config={'files': {path: content}}")
    unknown = set(config) - _CONFIG_KEYS
    if unknown:
        raise EnvFileError(
            f"config has unknown keys {sorted(unknown)} for template 'code-editing'; allowed: {sorted(_CONFIG_KEYS)}"
        )
    _file_map(config["files"], "config.files")
    limits_config = config.get("limits") or {}
    try:
        limits = SandboxLimits(**limits_config) if limits_config else None
    except TypeError as exc:
        raise EnvFileError(
            f"config.limits: {exc}; fields are those of SandboxLimits (wall_seconds, cpu_seconds, memory_bytes, ...)"
        ) from None
    verifier = _field(environment, "verifier") or config.get("defaultVerifier")
    tasks = list(_field(environment, "tasks") or [])
    converted = {id(task): task_from_sdk(task, index, config) for index, task in enumerate(tasks)}
    name = _field(environment, "name")
    description = _field(environment, "description") or config.get("description")

    def factory(task: Any, **kwargs: Any) -> CodeEditingEnv:
        code_task = converted.get(id(task)) or task_from_sdk(task, 0, config)
        options = {"limits": limits, "name": name, "description": description, "verifier": verifier, **kwargs}
        return CodeEditingEnv(code_task, **options)

    return factory
