"""``CodeEditingEnv``: the agent edits a small repository; hidden tests in a sandbox grade it.

Chat-environment convention: observations are the new chat messages, actions are assistant
messages with tool calls (``list_files``, ``read_file``, ``write_file``, ``str_replace``,
``apply_patch``, ``delete_file``, ``run_tests``, ``submit``). A message without tool calls,
or a ``submit`` call, ends the episode; the final step's ``info["score"]`` explains the grade.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import ForkableEnv, Score, from_jsonable, spaces, to_jsonable

from ._agent_calls import as_message, read_call, tool_calls_of
from ._tools import TOOL_ARGUMENTS, TOOLS, parse_arguments
from .grading import GradingInput, grade_repository
from .sandbox import Sandbox, SandboxLimits, get_sandbox
from .testrun import clean_output, run_pytest
from .workspace import Workspace, WorkspaceError

__all__ = ["CodeEditingEnv", "CodeTask", "visible_test_paths"]

_SYSTEM_PROMPT = (
    "You are a software engineer working in a small Python repository. Use the tools to inspect and edit "
    "files and to run the visible tests. Paths are relative to the repository root. When you are done, call "
    "submit (or answer without a tool call); hidden tests will then check your work."
)


@dataclass(frozen=True)
class CodeTask:
    """One code-editing task.

    Attributes:
        id: stable task id.
        split: ``train``, ``dev`` or ``test``.
        instruction: what the agent is asked to do.
        files: the initial repository, path to content.
        hidden_tests: test files added only for grading, path to content.
        visible_tests: paths (in ``files``) that ``run_tests`` runs by default.
        expected_files: path to expected content after the task (``None``: must be deleted).
        reference_patch: the unified diff the oracle applies.
        reference_actions: tool calls the oracle replays instead (``{"name", "arguments"}``).
        input: structured input shown below the instruction.
        metadata: skills, bug category and the like.
    """

    id: str
    split: str
    instruction: str
    files: Mapping[str, str]
    hidden_tests: Mapping[str, str] = field(default_factory=dict)
    visible_tests: tuple[str, ...] = ()
    expected_files: Mapping[str, str | None] = field(default_factory=dict)
    reference_patch: str | None = None
    reference_actions: tuple[Mapping[str, Any], ...] = ()
    input: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


class CodeEditingEnv(ForkableEnv, gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """Edit a repository with file tools; graded by hidden tests run in a sandbox.

    Args:
        task: the task to play.
        sandbox: a :class:`~rolloutgym_code.sandbox.Sandbox`, a provider name, or None (auto).
        limits: sandbox limits per test run.
        test_output_chars: how much of a ``run_tests`` output the agent sees.
        name: the environment's name in the system prompt.
        verifier: an optional SDK verifier config, scored on ``{"files": {...}}`` as well.
    """

    metadata = {"render_modes": []}
    tools = TOOLS

    def __init__(
        self,
        task: CodeTask,
        *,
        sandbox: Sandbox | str | None = None,
        limits: SandboxLimits | None = None,
        test_output_chars: int = 4000,
        name: str | None = None,
        description: str | None = None,
        verifier: Mapping[str, Any] | None = None,
    ) -> None:
        self.task = task
        self.sandbox = get_sandbox(sandbox)
        self.limits = limits
        self.test_output_chars = test_output_chars
        self.name = name
        self.description = description
        self.verifier = verifier
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.workspace: Workspace | None = None
        self._done = True
        self._invalid = 0
        self._test_runs = 0
        self._oracle_position = 0
        self._tool_calls: list[tuple[str, Any, Any, str | None]] = []

    # -- episode ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        super().reset(seed=seed)
        self._close_workspace()
        self.workspace = Workspace(self.task.files)
        self._done = False
        self._invalid = 0
        self._test_runs = 0
        self._oracle_position = 0
        self._tool_calls = []
        system = _SYSTEM_PROMPT
        if self.name:
            system = f"You are working in the '{self.name}' environment. " + system
        if self.description:
            system += "\n\n" + self.description
        user = self.task.instruction
        if self.task.input:
            user += "\n\nInput:\n" + json.dumps(self.task.input, indent=2)
        listing = "\n".join(self.workspace.list_files())
        user += f"\n\nRepository files:\n{listing}"
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return messages, {"task_id": self.task.id}

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if self._done or self.workspace is None:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        action = as_message(action)
        calls = tool_calls_of(action)
        if calls is None:
            final = action.get("content") if isinstance(action, dict) else ""
            return self._finish([], str(final or ""))
        observations: list[dict[str, Any]] = []
        for call in calls:  # each non-dict entry becomes an "unknown tool" error below
            call_id, name, arguments = read_call(call)
            if name == "submit":
                observations.append({"role": "tool", "tool_call_id": call_id, "content": "submitted for grading"})
                self._tool_calls.append(("submit", arguments, "submitted", None))
                message = arguments.get("message", "") if isinstance(arguments, dict) else ""
                return self._finish(observations, str(message or ""))
            content, error = self._call_tool(name, arguments)
            self._tool_calls.append((str(name), arguments, content if error is None else None, error))
            if error is not None:
                self._invalid += 1
                content = f"error: {error}"
            observations.append({"role": "tool", "tool_call_id": call_id, "content": content})
        return observations, 0.0, False, False, {"invalid_actions": self._invalid, "test_runs": self._test_runs}

    def _call_tool(self, name: Any, arguments: Any) -> tuple[str, str | None]:
        """Run one tool; returns ``(content, None)`` or ``("", error message)``."""
        assert self.workspace is not None
        if not isinstance(name, str) or name not in TOOL_ARGUMENTS:
            return "", f"unknown tool {name!r}; the tools are: {', '.join(TOOL_ARGUMENTS)}"
        try:
            parsed = parse_arguments(name, arguments if arguments is not None else {})
            return self._dispatch(name, parsed), None
        except (ValueError, WorkspaceError) as exc:
            return "", str(exc)
        except (OSError, UnicodeError) as exc:
            return "", f"{name} failed: {exc}"

    def _dispatch(self, name: str, arguments: Any) -> str:
        workspace = self.workspace
        assert workspace is not None
        if name == "list_files":
            return "\n".join(workspace.list_files(arguments.path)) or "(no files)"
        if name == "read_file":
            return workspace.read_file(arguments.path, arguments.start_line, arguments.end_line)
        if name == "write_file":
            size = workspace.write_file(arguments.path, arguments.content)
            return f"wrote {size} bytes to {arguments.path}"
        if name == "str_replace":
            workspace.str_replace(arguments.path, arguments.old_str, arguments.new_str)
            return f"replaced 1 occurrence in {arguments.path}"
        if name == "apply_patch":
            changed = workspace.apply_patch(arguments.patch)
            return "patched: " + ", ".join(changed)
        if name == "delete_file":
            workspace.delete_file(arguments.path)
            return f"deleted {arguments.path}"
        if name == "run_tests":
            return self._run_visible_tests(arguments.path)
        raise ValueError(f"unknown tool {name!r}")

    def _run_visible_tests(self, path: str | None) -> str:
        workspace = self.workspace
        assert workspace is not None
        if path is not None:
            workspace.resolve(path)
            if not workspace.list_files(path):
                raise WorkspaceError(f"no test files at {path!r}; run list_files to see the files")
            paths = [path]
        else:
            paths = [test for test in self.task.visible_tests if workspace.exists(test)]
            if not paths:
                return "this repository has no visible tests; write your own test file and run_tests with its path"
        self._test_runs += 1
        run = run_pytest(self.sandbox, workspace.snapshot(), paths, limits=self.limits)
        text = run.summary()
        if run.failures:
            text += "\nfailing:\n" + run.failure_report()
        output = clean_output(run.sandbox.output) if run.sandbox is not None else ""
        limit = self.test_output_chars
        if len(output) > limit:
            output = output[: limit // 2] + "\n[... output truncated ...]\n" + output[-limit // 2 :]
        return f"{text}\n\n{output}".rstrip()

    def _finish(
        self, observations: list[dict[str, Any]], final_output: str
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        assert self.workspace is not None
        self._done = True
        score = self._grade(final_output)
        info = {"score": score.to_dict(), "invalid_actions": self._invalid, "test_runs": self._test_runs}
        return observations, score.value, True, False, info

    def _grade(self, final_output: str) -> Score:
        assert self.workspace is not None
        final_files = self.workspace.text_files()
        grading = GradingInput(
            original_files=self.task.files,
            final_files=final_files,
            hidden_tests=self.task.hidden_tests,
            visible_tests=self.task.visible_tests,
            expected_files=self.task.expected_files,
        )
        score = grade_repository(grading, self.sandbox, limits=self.limits)
        if self.verifier is None:
            return score
        from rolloutgym.verifiers import ToolCallRecord, VerifierContext, build_verifier

        context = VerifierContext(
            final_state={"files": final_files},
            final_output=final_output,
            tool_calls=[
                ToolCallRecord(name, arguments, result, error) for name, arguments, result, error in self._tool_calls
            ],
            task=self.task,
        )
        verified = build_verifier(self.verifier).score(context)
        components = {**score.components, "verifier": verified}
        has_gate = bool(self.task.hidden_tests or self.task.expected_files or self.task.visible_tests)
        value = min(score.value, verified.value) if has_gate else verified.value
        feedback = "\n".join(
            part
            for part in (score.feedback if has_gate else None, f"verifier: {verified.feedback or verified.value}")
            if part
        )
        return Score(value, components, score.metadata, feedback=feedback)

    # -- reference solutions ------------------------------------------------------------

    def _oracle_calls(self) -> list[dict[str, Any]]:
        task = self.task
        if task.reference_patch:
            return [{"name": "apply_patch", "arguments": {"patch": task.reference_patch}}]
        if task.reference_actions:
            return [dict(action) for action in task.reference_actions]
        calls = []
        for path, content in sorted(task.expected_files.items()):
            if content is None:
                calls.append({"name": "delete_file", "arguments": {"path": path}})
            else:
                calls.append({"name": "write_file", "arguments": {"path": path, "content": content}})
        return calls

    def oracle_action(self) -> dict[str, Any]:
        """The reference solution, one tool call per step, then ``submit``."""
        calls = self._oracle_calls()
        position = self._oracle_position
        self._oracle_position += 1
        if position < len(calls):
            call = calls[position]
            if call.get("role") == "assistant":
                return call
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"call_{position}", "name": call["name"], "arguments": call.get("arguments", {})}
                ],
            }
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"call_{position}", "name": "submit", "arguments": {"message": "applied the reference solution"}}
            ],
        }

    def null_action(self) -> dict[str, Any]:
        """Submit the repository unchanged."""
        return {"role": "assistant", "content": ""}

    # -- fork (ForkableEnv): a copy of the workspace's files and the episode's counters ----

    def _snapshot_state(self) -> dict[str, Any]:
        files = None if self.workspace is None else self.workspace.text_files()
        calls = [to_jsonable(list(call)) for call in self._tool_calls]
        counters = [self._done, self._invalid, self._test_runs, self._oracle_position]
        return {"files": files, "tool_calls": calls, "counters": counters}

    def _restore_state(self, data: dict[str, Any]) -> None:
        files = data["files"]
        done, invalid, test_runs, oracle_position = data["counters"]
        calls = [tuple(from_jsonable(call)) for call in data["tool_calls"]]
        if any(len(call) != 4 for call in calls):
            raise ValueError("a tool call record must have 4 fields")
        # Workspace() checks every path (nothing outside the workspace) and every size.
        workspace = None if files is None else Workspace({str(path): str(text) for path, text in files.items()})
        self._close_workspace()
        self.workspace, self._tool_calls = workspace, calls  # type: ignore[assignment]
        self._done, self._invalid = bool(done), int(invalid)
        self._test_runs, self._oracle_position = int(test_runs), int(oracle_position)

    def _fork_blank(self) -> CodeEditingEnv:
        blank = copy.copy(self)
        blank.workspace = None  # never the parent's directory: restore makes the fork's own
        return blank

    # -- cleanup ------------------------------------------------------------------------

    def _close_workspace(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None

    def close(self) -> None:
        """Delete the workspace (idempotent)."""
        self._close_workspace()
        self._done = True


def visible_test_paths(files: Mapping[str, str], declared: Sequence[str] | None = None) -> tuple[str, ...]:
    """``declared`` when given, else every ``test_*.py`` / ``*_test.py`` file in ``files``."""
    if declared is not None:
        return tuple(declared)
    found = []
    for path in sorted(files):
        base = path.rsplit("/", 1)[-1]
        if base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py")):
            found.append(path)
    return tuple(found)
