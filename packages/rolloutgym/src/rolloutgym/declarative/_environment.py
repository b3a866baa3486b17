"""``Environment``: a declarative agent environment (template + config + tasks + verifier)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol.errors import EnvFileError

from ._task import Task
from .shapes import validate_config

__all__ = ["SDK_TEMPLATES", "Environment"]

SDK_TEMPLATES = ("sql", "workflow", "custom", "code-editing", "browser")
"""The rollout SDK's templates (each compiled by the plugin that registers it)."""

_TEMPLATE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_PAYLOAD_KEYS = {"slug", "name", "template", "tasks", "description", "schema", "seed", "config", "verifier", "version"}


@dataclass
class Environment:
    """A declarative environment, as in the rollout SDK (same fields, same order, same checks).

    Attributes:
        slug: short identifier; the env id of a file env is ``file/<slug>-v<version>``.
        name: display name (also used in the agent's system prompt).
        template: ``sql``, ``workflow``, ``custom``, ``code-editing``, ``browser``, or a
            template another plugin registers.
        tasks: the :class:`Task` list.
        description: shown to the agent; put written policy rules here.
        schema: ``sql`` only: the DDL.
        seed: ``sql`` only: INSERT statements that fill the database.
        config: every other template: its config (see the builders).
        verifier: ``verifier_config(...)``; a field here (the SDK sets it as an attribute
            and then forgets it in ``to_payload``). ``config["defaultVerifier"]`` is the fallback.
        version: bumps the env id (``-v1``) when tasks or grading change.

    Raises:
        EnvFileError (a ``ValueError``): the SDK's structural rules are broken (``sql``
            needs ``schema`` and no ``config``; other templates need ``config`` and no
            ``schema``/``seed``) or the config does not match the template's shape.
    """

    slug: str
    name: str
    template: str
    tasks: list[Task] = field(default_factory=list)
    description: str | None = None
    schema: str | None = None
    seed: str | None = None
    config: dict[str, Any] | None = None
    verifier: dict[str, Any] | None = None
    version: int = 0

    def __post_init__(self) -> None:
        self._check(registry=None)

    def _check(self, *, registry: Any) -> None:
        """The structural rules and the config shape (the template plugin's validator, via ``registry``)."""
        where = f"environment {self.slug!r}"
        if not isinstance(self.slug, str) or not self.slug.strip():
            raise EnvFileError(f"{where}: 'slug' must be a non-empty string")
        if not isinstance(self.name, str):
            raise EnvFileError(f"{where}: 'name' must be a string")
        if not isinstance(self.template, str) or not _TEMPLATE_NAME.match(self.template):
            raise EnvFileError(
                f"{where}: 'template' must be a template name such as {', '.join(map(repr, SDK_TEMPLATES))}, "
                f"got {self.template!r}"
            )
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 0:
            raise EnvFileError(f"{where}: 'version' must be a non-negative integer")
        self.tasks = list(self.tasks or [])
        for index, task in enumerate(self.tasks):
            if not isinstance(task, Task):
                raise EnvFileError(
                    f"{where}: tasks[{index}] is a {type(task).__name__}; use Task(...) (or Task.from_jsonl)"
                )
        if self.template == "sql":
            if isinstance(self.config, dict) and {"schema", "seed"} & set(self.config):
                # The SDK's templates table puts the sql template's schema/seed in its config: the same thing.
                if (self.schema is not None and "schema" in self.config) or (
                    self.seed is not None and "seed" in self.config
                ):
                    raise EnvFileError(
                        f"{where}: give schema/seed once, either as Environment(schema=..., seed=...) or in config, "
                        "not both"
                    )
                config = dict(self.config)
                self.schema = config.pop("schema", self.schema)
                self.seed = config.pop("seed", self.seed)
                self.config = config or None
            database = self.config.get("database") if isinstance(self.config, dict) else None
            if self.config is not None and (
                set(self.config) - {"database", "description"} or not isinstance(database, str)
            ):
                unknown = (
                    sorted(set(self.config) - {"database", "description"}) if isinstance(self.config, dict) else []
                )
                raise EnvFileError(
                    f"{where}: template='sql' takes schema= (the DDL) and seed= (INSERT statements), as Environment "
                    "arguments or in config={'schema': ..., 'seed': ...}, or config={'database': PATH} for an existing "
                    "SQLite file" + (f"; unknown config keys: {', '.join(map(repr, unknown))}" if unknown else "")
                )
            if database is None and (not self.schema or not isinstance(self.schema, str)):
                raise EnvFileError(
                    f"{where}: template='sql' requires schema (the DDL string) or config={{'database': PATH}}"
                )
            if self.seed is not None and not isinstance(self.seed, str):
                raise EnvFileError(f"{where}: seed must be SQL text (INSERT statements)")
        else:
            if self.config is None:
                raise EnvFileError(f"{where}: template={self.template!r} requires config")
            if self.schema is not None or self.seed is not None:
                raise EnvFileError(
                    f"{where}: schema/seed are only for template='sql'; template={self.template!r} uses config"
                )
            validate_config(self.template, self.config, registry=registry)

    @property
    def env_id(self) -> str:
        """``file/<slug>-v<version>`` (characters outside ``[A-Za-z0-9_.-]`` become ``-``)."""
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", self.slug).strip("-.") or "env"
        return f"file/{safe}-v{self.version}"

    @property
    def verifier_config(self) -> dict[str, Any] | None:
        """``verifier``, else ``config["defaultVerifier"]``, else None."""
        if self.verifier is not None:
            return self.verifier
        if isinstance(self.config, Mapping):
            default = self.config.get("defaultVerifier")
            return dict(default) if isinstance(default, Mapping) else None
        return None

    def validate(self, *, registry: Any = None) -> None:
        """Check everything: the structural rules, the config shape, the tasks and the verifier.

        The verifier's primitive types are checked against the graders the registry knows.

        Raises:
            EnvFileError: one line per problem, each with its path.
        """
        self._check(registry=registry)
        verifier = self.verifier_config
        if verifier is not None:
            from ..verifiers import validate_verifier

            validate_verifier(
                verifier, registry=registry, path="verifier" if self.verifier is not None else "config.defaultVerifier"
            )

    def to_payload(self) -> dict[str, Any]:
        """The SDK's JSON payload, plus ``verifier`` (which the SDK drops) and ``version`` when set."""
        payload: dict[str, Any] = {
            "slug": self.slug,
            "name": self.name,
            "template": self.template,
            "tasks": [task.to_payload() for task in self.tasks],
        }
        if self.description:
            payload["description"] = self.description
        if self.template == "sql":
            if self.schema is not None:
                payload["schema"] = self.schema
            if self.seed is not None:
                payload["seed"] = self.seed
            if self.config is not None:
                payload["config"] = self.config
        else:
            payload["config"] = self.config
        if self.verifier is not None:
            payload["verifier"] = self.verifier
        if self.version:
            payload["version"] = self.version
        return payload

    def to_json(self, **dumps_options: Any) -> str:
        return json.dumps(self.to_payload(), **dumps_options)

    @classmethod
    def from_payload(cls, data: Any, *, where: str = "environment") -> Environment:
        """Build an Environment from :meth:`to_payload` output (e.g. a ``.json`` env file).

        Raises:
            EnvFileError: the payload is malformed; the message gives the path.
        """
        if not isinstance(data, Mapping):
            raise EnvFileError(f"{where}: an environment must be a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - _PAYLOAD_KEYS)
        if unknown:
            from rolloutgym_protocol.errors import did_you_mean

            hints = "".join(did_you_mean(key, _PAYLOAD_KEYS) for key in unknown)
            raise EnvFileError(
                f"{where}: unknown field(s) {', '.join(map(repr, unknown))}.{hints} "
                f"Known: {', '.join(sorted(_PAYLOAD_KEYS))}"
            )
        missing = [key for key in ("slug", "name", "template") if key not in data]
        if missing:
            raise EnvFileError(f"{where}: missing required field(s) {', '.join(map(repr, missing))}")
        raw_tasks = data.get("tasks") or []
        if not isinstance(raw_tasks, list):
            raise EnvFileError(f"{where}.tasks: must be a list of task objects")
        tasks = [Task.from_payload(item, where=f"{where}.tasks[{index}]") for index, item in enumerate(raw_tasks)]
        try:
            return cls(
                slug=data["slug"],
                name=data["name"],
                template=data["template"],
                tasks=tasks,
                description=data.get("description"),
                schema=data.get("schema"),
                seed=data.get("seed"),
                config=data.get("config"),
                verifier=data.get("verifier"),
                version=data.get("version", 0),
            )
        except EnvFileError as exc:
            raise EnvFileError(f"{where}: {exc}") from None
