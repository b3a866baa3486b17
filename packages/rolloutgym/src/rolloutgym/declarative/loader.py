"""Loading env files: ``rolloutgym run my_env.py|.json|.jsonl``.

* ``.py``: the file is imported (as the SDK's ``rollout push`` does) and its
  :class:`Environment` instances are collected; ``--env-arg slug=...`` picks one when there
  are several.
* ``.json``: one Environment payload (``Environment.to_payload()``), or a list of them.
* ``.jsonl``: either one Environment payload per line (each line has ``template``), or a
  **tasks file** (each line has ``instruction``). A tasks file runs against the environment
  in ``--env-arg env=PATH`` or, by default, the ``.json``/``.py`` file with the same stem next
  to it (``refund.jsonl`` -> ``refund.json`` or ``refund.py``); its tasks replace the env's.

A **folder** is an env of the template whose ``TemplateSpec.folder_marker`` file it (or one of
its subfolders) holds; that template's ``folder_loader`` reads it (``task.toml``: a Harbor task
set, rolloutgym-code).

The env id of a file env is ``file/<slug>-v<version>`` and the run's source is ``file:<path>``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import EnvFileError, RolloutGymError, TemplateNotFound, json_error_text

from ._environment import Environment
from ._task import Task

__all__ = [
    "EnvFile",
    "compile_environment",
    "load_env_file",
    "load_environments",
    "load_folder",
    "open_env_file",
    "resolve_env_file",
]


def _import_python(path: Path) -> list[Environment]:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"_rolloutgym_env_file_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EnvFileError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise EnvFileError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except EnvFileError as exc:
        sys.modules.pop(module_name, None)
        raise EnvFileError(f"{path}{_line_in(exc, path)}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - an env file is user code; report it, never a bare traceback
        sys.modules.pop(module_name, None)
        raise EnvFileError(
            f"{path}{_line_in(exc, path)}: importing the env file raised {type(exc).__name__}: {exc}"
        ) from None
    found = [value for value in vars(module).values() if isinstance(value, Environment)]
    unique: list[Environment] = []
    for environment in found:
        if all(environment is not other for other in unique):
            unique.append(environment)
    return unique


def _line_in(exc: BaseException, path: Path) -> str:
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if Path(frame.filename) == path]
    return f":{frames[-1].lineno}" if frames else ""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EnvFileError(f"{path}:{exc.lineno}: not valid JSON ({json_error_text(exc)})") from None
    except RecursionError:
        raise EnvFileError(f"{path}: JSON nests too deeply") from None


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise EnvFileError(f"{path}:{number}: not valid JSON ({json_error_text(exc)})") from None
        except RecursionError:
            raise EnvFileError(f"{path}:{number}: JSON nests too deeply") from None
    return rows


def load_environments(path: str | Path, *, env: str | Path | None = None) -> list[Environment]:
    """Every :class:`Environment` an env file defines (see the module docstring for formats).

    Raises:
        EnvFileError: the file is missing, malformed, or defines no environment.
    """
    path = Path(path)
    if not path.is_file():
        raise EnvFileError(f"env file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".py":
        environments = _import_python(path)
    elif suffix == ".json":
        data = _read_json(path)
        items = data if isinstance(data, list) else [data]
        environments = [
            Environment.from_payload(item, where=f"{path}" + (f"[{index}]" if isinstance(data, list) else ""))
            for index, item in enumerate(items)
        ]
    elif suffix == ".jsonl":
        rows = _read_jsonl(path)
        if rows and isinstance(rows[0][1], dict) and "instruction" in rows[0][1] and "template" not in rows[0][1]:
            tasks = [Task.from_payload(data, where=f"{path}:{number}") for number, data in rows]
            return [replace(environment, tasks=tasks) for environment in load_environments(_tasks_env_file(path, env))]
        environments = [Environment.from_payload(data, where=f"{path}:{number}") for number, data in rows]
    else:
        raise EnvFileError(f"env file {path}: unknown extension {path.suffix!r}; use .py, .json or .jsonl")
    if not environments:
        raise EnvFileError(
            f"{path} defines no Environment; create one with Environment(slug=..., name=..., template=..., ...)"
        )
    return environments


def _tasks_env_file(path: Path, env: str | Path | None) -> Path:
    if env is not None:
        return Path(env)
    for suffix in (".json", ".py"):
        candidate = path.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    raise EnvFileError(
        f"{path} is a tasks file (its lines have 'instruction'); say which environment it is for with "
        f"--env-arg env=PATH, or put {path.with_suffix('.json').name} or {path.with_suffix('.py').name} next to it"
    )


def load_env_file(path: str | Path, *, slug: str | None = None, env: str | Path | None = None) -> Environment:
    """The one :class:`Environment` of an env file (``slug`` picks one when there are several)."""
    environments = load_environments(path, env=env)
    slugs = [environment.slug for environment in environments]
    if slug is not None:
        for environment in environments:
            if environment.slug == slug:
                return environment
        from rolloutgym_protocol.errors import did_you_mean

        raise EnvFileError(
            f"{path} has no environment with slug {slug!r}.{did_you_mean(slug, slugs)} Its slugs: {', '.join(slugs)}"
        )
    if len(environments) > 1:
        raise EnvFileError(
            f"{path} defines {len(environments)} environments ({', '.join(slugs)}); pick one with --env-arg slug=SLUG"
        )
    return environments[0]


def compile_environment(environment: Environment, *, registry: Any = None) -> Any:
    """Validate ``environment`` and compile it with its template's plugin.

    Returns ``factory(task, **kwargs) -> Env | AsyncEnv``.

    Raises:
        EnvFileError: the environment is malformed.
        TemplateNotFound: no installed plugin provides the template (the message says which to install).
    """
    from ..registry import get_registry, import_entry_point

    registry = registry or get_registry()
    environment.validate(registry=registry)
    try:
        spec = registry.template(environment.template)
    except TemplateNotFound as exc:
        raise TemplateNotFound(
            f"environment {environment.slug!r} uses template {environment.template!r}: {exc}"
        ) from None
    compiler = import_entry_point(spec.entry_point, what=f"template {spec.name}")
    try:
        return compiler(environment)
    except RolloutGymError:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        raise EnvFileError(f"environment {environment.slug!r}: template {spec.name!r} rejected it: {exc}") from exc


@dataclass(frozen=True)
class EnvFile:
    """An env file opened for a run: its environment, tasks (ids filled in) and a factory.

    ``make(task)`` builds a fresh env for one of :attr:`tasks`.
    """

    environment: Environment
    tasks: tuple[Task, ...]
    make: Callable[[Any], Any]
    path: str

    @property
    def env_id(self) -> str:
        return self.environment.env_id

    @property
    def version(self) -> int:
        return self.environment.version

    @property
    def source(self) -> str:
        """``file:<path>``, as recorded in a run header."""
        return f"file:{self.path}"


def load_folder(path: str | Path, *, registry: Any = None) -> Environment:
    """The :class:`Environment` of a folder, read by the template whose ``folder_marker`` it holds.

    Raises:
        EnvFileError: no installed template reads such a folder (the message names the markers).
    """
    from ..registry import get_registry, import_entry_point

    folder = Path(path)
    registry = registry or get_registry()
    markers = []
    for registered in registry.template_specs().values():
        spec = registered.spec
        if not spec.folder_marker or not spec.folder_loader:
            continue
        markers.append(f"{spec.folder_marker} ({spec.name})")
        if (folder / spec.folder_marker).is_file() or any(
            (child / spec.folder_marker).is_file() for child in folder.iterdir() if child.is_dir()
        ):
            loader = import_entry_point(spec.folder_loader, what=f"template {spec.name}")
            return loader(folder)
    raise EnvFileError(
        f"{folder} is a folder that no installed template reads; a folder env holds one of "
        f"{', '.join(markers) or 'no marker (no installed template reads folders)'} in it or in its subfolders"
    )


def open_env_file(path: str | Path, *, registry: Any = None, **kwargs: Any) -> EnvFile:
    """Load and compile an env file for a run.

    Keyword arguments ``slug`` (which environment) and ``env`` (the env file of a tasks
    ``.jsonl``) are used here; the others go to the template's env factory (e.g.
    ``max_tool_calls``, ``judge``).

    Raises:
        EnvFileError: the file is malformed or its environment has no tasks.
        TemplateNotFound: no installed plugin provides its template.
    """
    slug = kwargs.pop("slug", None)
    env = kwargs.pop("env", None)
    if Path(path).is_dir():
        environment = load_folder(path, registry=registry)
    else:
        environment = load_env_file(path, slug=slug, env=env)
    factory = compile_environment(environment, registry=registry)
    tasks = tuple(
        task if task.id is not None else replace(task, id=f"{index}") for index, task in enumerate(environment.tasks)
    )
    if not tasks:
        raise EnvFileError(
            f"environment {environment.slug!r} in {path} has no tasks; "
            "add Task(...)s (or env.tasks = Task.from_jsonl(...))"
        )
    options = dict(kwargs)

    def make(task: Any) -> Any:
        return factory(task, **options)

    return EnvFile(environment, tasks, make, str(path))


# The name earlier versions used; a run resolves env files through rolloutgym.sources.
resolve_env_file = open_env_file
