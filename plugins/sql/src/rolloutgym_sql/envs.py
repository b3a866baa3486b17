"""The SQL chat environment and the factories of the shipped environments.

:class:`SqlEnv` follows the chat-environment convention: observations are the new chat
messages, actions are assistant messages with tool calls to ``describe_schema``,
``run_sql`` and ``submit_answer``; a message without tool calls is the final answer.
Every episode works on its own in-memory copy of the database (SQLite by default, DuckDB
with ``backend="duckdb"``).
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import ForkableEnv, Score, spaces
from rolloutgym_protocol.display import json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import EnvClosedError
from rolloutgym_protocol.toolcalls import normalize_tool_action, shape_error

from ._backends import check_backend, open_session
from ._forking import restore_session, session_state
from ._results import Limits, StatementError, format_result
from ._schema import describe_tables
from ._sources import DatabaseSource
from ._tasks import SqlTask
from .grading import grade_changes, grade_query

__all__ = ["SQL_TOOLS", "SqlEnv"]

SQL_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "describe_schema",
            "description": "Describe the database: tables, columns, types, keys and row counts. Pass 'table' to "
            "describe one table.",
            "parameters": {
                "type": "object",
                "properties": {"table": {"type": "string", "description": "Only this table (optional)."}},
                "required": [],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_sql",
            "description": (
                "Run one SQL statement on the database and see its result as a table (long results are cut). "
                "In tasks that change data, statements that modify the database take effect immediately."
            ),
            "parameters": {
                "type": "object",
                "properties": {"sql": {"type": "string", "description": "One SQL statement."}},
                "required": ["sql"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit_answer",
            "description": (
                "Submit the final answer and end the episode. For a question, pass the final SELECT query as 'sql' "
                "(preferred; it is executed and its result graded) or the final value as 'answer'. For a task that "
                "changes data, make the changes with run_sql first, then call submit_answer without arguments."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "sql": {"type": "string", "description": "The final SQL query."},
                    "answer": {"type": "string", "description": "The final value, if you answer without SQL."},
                },
                "required": [],
                "additionalProperties": False,
            },
        },
    },
]

_TOOL_ARGUMENTS = {"describe_schema": {"table"}, "run_sql": {"sql"}, "submit_answer": {"sql", "answer"}}
_REQUIRED_ARGUMENTS = {"run_sql": {"sql"}}


class SqlEnv(ForkableEnv, gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """Answer a question or change data with SQL on a private copy of a database.

    Args:
        task: the task to play.
        source: the environment's database (a task with its own ``database`` overrides it).
        backend: ``"sqlite"`` (default) or ``"duckdb"``.
        limits: time and size limits of statements and results.
        name: the environment's name, shown in the system prompt.
        description: what the database is about, shown in the system prompt.

    The episode ends with ``submit_answer`` or a message without tool calls; the final
    ``info["score"]`` has components ``executes`` and ``result_match`` (questions) or
    ``executes`` and ``database_diff`` (data-changing tasks).
    """

    metadata = {"render_modes": []}
    tools = SQL_TOOLS

    def __init__(
        self,
        task: SqlTask,
        *,
        source: DatabaseSource | None = None,
        backend: str = "sqlite",
        limits: Limits | None = None,
        name: str = "sql",
        description: str = "",
    ) -> None:
        if not isinstance(task, SqlTask):
            raise TypeError(f"SqlEnv needs a SqlTask, got {type(task).__name__}")
        self.task = task
        self.backend = check_backend(backend)
        chosen = task.database or source
        if chosen is None:
            raise ValueError(f"task {task.id!r} has no database: pass source= or give the task a database")
        self.source: DatabaseSource = chosen
        self.limits = limits or Limits()
        self.name = name
        self.description = description
        self.read_only = not task.changes_data
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._session: Any = None
        self._done = True
        self._closed = False
        self._counters = {"invalid_actions": 0, "sql_errors": 0, "statements": 0}
        self._changes = {"failed": 0, "succeeded": 0}
        self._oracle_step = 0

    # -- episode -------------------------------------------------------------------------

    def _system_prompt(self) -> str:
        dialect = "DuckDB" if self.backend == "duckdb" else "SQLite"
        lines = [
            f"You are working with a {dialect} database in the '{self.name}' environment.",
        ]
        if self.description:
            lines.append(self.description.strip())
        lines.append(
            "Tools: describe_schema shows the tables; run_sql runs one SQL statement and shows its result; "
            "submit_answer ends the episode."
        )
        if self.read_only:
            lines.append(
                "The database is read-only. Answer the question with a single SQL query: submit it with "
                "submit_answer(sql=...). Its result is compared with the correct result, so return exactly the "
                "columns and rows asked for (order matters only when the question asks for an order)."
            )
        else:
            lines.append(
                "Make the requested changes with run_sql (one statement per call), then call submit_answer() "
                "without arguments. The final state of the database is what is graded: change exactly what is asked."
            )
        return "\n".join(lines)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        if self._closed:
            raise EnvClosedError(f"SqlEnv for task {self.task.id!r} is closed; make a new environment")
        super().reset(seed=seed)
        if self._session is not None:
            self._session.close()
        self._session = open_session(self.backend, self.source, read_only=self.read_only, limits=self.limits)
        self._done = False
        self._counters = {"invalid_actions": 0, "sql_errors": 0, "statements": 0}
        self._changes = {"failed": 0, "succeeded": 0}
        self._oracle_step = 0
        messages = [
            {"role": "system", "content": self._system_prompt()},
            {"role": "user", "content": self.task.instruction},
        ]
        return messages, {"task_id": self.task.id, "backend": self.backend}

    def step(self, action: dict[str, Any]) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done or self._session is None:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        calls = action.get("tool_calls") if isinstance(action, dict) else None
        if not calls:
            content = action.get("content") if isinstance(action, dict) else action
            text = content if isinstance(content, str) else None
            score = self._grade(sql=None, answer=text)
            return [], score.value, True, False, self._final_info(score)
        if not isinstance(calls, list):
            calls = [calls]
        observations: list[dict[str, Any]] = []
        for index, call in enumerate(calls):
            call_id = safe_str(call.get("id") or f"call_{index}") if isinstance(call, dict) else f"call_{index}"
            name, arguments, problem = _parse_call(call)
            if problem is not None:
                self._counters["invalid_actions"] += 1
                observations.append(_tool_message(call_id, f"error: {problem}"))
                continue
            if name == "submit_answer":
                sql = arguments.get("sql")
                answer = arguments.get("answer")
                if self.task.changes_data and sql is not None and sql.strip():
                    content = self._run_sql(sql)
                    observations.append(_tool_message(call_id, content))
                    score = self._grade(sql=None, answer=None)
                else:
                    observations.append(_tool_message(call_id, "submitted"))
                    score = self._grade(sql=sql, answer=answer)
                return observations, score.value, True, False, self._final_info(score)
            if name == "describe_schema":
                content = describe_tables(
                    self._session.tables(),
                    dialect=self._session.dialect,
                    read_only=self.read_only,
                    only=arguments.get("table"),
                )
                if content.startswith("error:"):
                    self._counters["invalid_actions"] += 1
            else:
                content = self._run_sql(arguments["sql"])
            observations.append(_tool_message(call_id, content))
        return observations, 0.0, False, False, dict(self._counters)

    def _run_sql(self, sql: str) -> str:
        if not isinstance(sql, str):
            self._counters["invalid_actions"] += 1
            return f'error: run_sql takes {{"sql": "<one SQL statement>"}}, not {type(sql).__name__}'
        self._counters["statements"] += 1
        try:
            result = self._session.execute(sql, max_rows=self.limits.display_rows)
        except StatementError as exc:
            self._counters["sql_errors"] += 1
            if not self.read_only and not sql.lstrip().lower().startswith(("select", "with", "explain")):
                self._changes["failed"] += 1
            return f"error: {exc}"
        if not result.returns_rows:
            self._changes["succeeded"] += 1
        return format_result(result, self.limits)

    def _grade(self, *, sql: str | None, answer: Any) -> Score:
        self._done = True
        if self.task.changes_data:
            return grade_changes(
                self.task,
                session=self._session,
                source=self.source,
                backend=self.backend,
                limits=self.limits,
                failed_changes=self._changes["failed"],
                successful_changes=self._changes["succeeded"],
            )
        return grade_query(
            self.task,
            session=self._session,
            source=self.source,
            backend=self.backend,
            limits=self.limits,
            sql=sql,
            answer=answer,
        )

    def _final_info(self, score: Score) -> dict[str, Any]:
        return {**self._counters, "score": score.to_dict()}

    # -- reference policies ------------------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """The reference solution, one action per call: the gold SQL, then ``submit_answer``."""
        gold = self.task.gold_for(self.backend)
        step = self._oracle_step
        self._oracle_step += 1
        if not self.task.changes_data:
            arguments = (
                {"sql": gold[0]}
                if gold
                else {"answer": json.dumps([list(row) for row in self.task.expected_rows or ()])}
            )
            return _assistant_call(f"oracle_{step}", "submit_answer", arguments)
        if step < len(gold):
            return _assistant_call(f"oracle_{step}", "run_sql", {"sql": gold[step]})
        return _assistant_call(f"oracle_{step}", "submit_answer", {})

    def null_action(self) -> dict[str, Any]:
        """Submit nothing: an empty final message."""
        return {"role": "assistant", "content": ""}

    # -- fork (ForkableEnv): the database and the counters ----------------------------------

    def _snapshot_state(self) -> dict[str, Any]:
        if self._closed:
            raise EnvClosedError(f"SqlEnv for task {self.task.id!r} is closed; snapshot it before closing")
        return {
            "done": self._done,
            "counters": dict(self._counters),
            "changes": dict(self._changes),
            "oracle_step": self._oracle_step,
            **session_state(self._session, read_only=self.read_only),
        }

    def _restore_state(self, data: dict[str, Any]) -> None:
        counters = {name: int(data["counters"][name]) for name in self._counters}
        changes = {name: int(data["changes"][name]) for name in self._changes}
        session = restore_session(self, data)
        if self._session is not None:
            self._session.close()
        self._session, self._closed = session, False
        self._done, self._oracle_step = bool(data["done"]), int(data["oracle_step"])
        self._counters, self._changes = counters, changes

    def _fork_blank(self) -> SqlEnv:
        return SqlEnv(
            self.task,
            source=self.source,
            backend=self.backend,
            limits=self.limits,
            name=self.name,
            description=self.description,
        )

    def close(self) -> None:
        """Release the episode's database (idempotent)."""
        if self._session is not None:
            self._session.close()
            self._session = None
        self._closed = True
        self._done = True


def _tool_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _assistant_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _parse_call(call: Any) -> tuple[str, dict[str, Any], str | None]:
    """Validate one tool call; returns ``(name, arguments, problem)``."""
    tools = ", ".join(_TOOL_ARGUMENTS)
    if not isinstance(call, dict):
        return "", {}, shape_error(f"a tool call must be an object with 'name' and 'arguments' (tools: {tools})")
    name = call.get("name")
    if name not in _TOOL_ARGUMENTS:
        return safe_str(name), {}, f"unknown tool {safe_repr(name)[:80]}; the tools are: {tools}"
    arguments = call.get("arguments", {})
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):  # some clients send the raw JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return name, {}, f"the arguments of {name} are not valid JSON: {arguments[:100]!r}"
    if not isinstance(arguments, dict):
        return name, {}, f"the arguments of {name} must be a JSON object, got {type(arguments).__name__}"
    unknown = set(arguments) - _TOOL_ARGUMENTS[name]
    if unknown:
        allowed = ", ".join(sorted(_TOOL_ARGUMENTS[name])) or "none"
        unknown_names = sorted(safe_repr(key)[:40] if not isinstance(key, str) else key[:40] for key in unknown)
        return name, {}, f"{name} got unknown argument(s) {', '.join(unknown_names[:5])}; its arguments: {allowed}"
    missing = _REQUIRED_ARGUMENTS.get(name, set()) - set(arguments)
    if missing:
        return name, {}, f'{name} needs the argument(s) {", ".join(sorted(missing))}, e.g. {{"sql": "SELECT ..."}}'
    for key, value in arguments.items():
        if value is not None and not isinstance(value, str):
            if name == "submit_answer" and key == "answer":
                arguments = {**arguments, key: json_text(value)}
                continue
            return name, {}, f"the argument {key!r} of {name} must be a string, got {type(value).__name__}"
    return name, arguments, None
