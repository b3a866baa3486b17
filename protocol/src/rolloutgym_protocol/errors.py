"""The rolloutgym exception hierarchy.

Every exception raised on purpose by rolloutgym or a plugin derives from
:class:`RolloutGymError`; categories also inherit the matching builtin so callers
that catch ``LookupError`` or ``ValueError`` keep working::

    RolloutGymError
    ├── ConfigError (ValueError)            bad user input: options, env files, run files
    │   ├── EnvFileError                    a malformed declarative env file
    │   ├── RunFileError                    a corrupt or mismatched run file
    │   ├── StateError                      an env state (fork) that is corrupt or from another env
    │   └── SpecError                       a malformed spec returned by a plugin
    ├── NotFoundError (LookupError)
    │   ├── EnvNotFound
    │   ├── PolicyNotFound
    │   ├── TemplateNotFound
    │   ├── GraderNotFound
    │   ├── ExporterNotFound
    │   └── TaskNotFound
    ├── PluginLoadError (ImportError)       a plugin or entry point failed to import
    ├── InvalidAction (ValueError)          an action outside the env's action space
    ├── InvalidStepResult (ValueError)      NaN reward, non-bool flag, bad info
    ├── EnvClosedError (RuntimeError)       a call on a closed environment
    ├── NotForkable (TypeError)             fork/snapshot/restore on an env that cannot
    ├── PolicyError (RuntimeError)          a policy adapter failed (server, model, parsing)
    ├── SandboxError (RuntimeError)         an untrusted-code sandbox is missing or broken
    └── OutputError (OSError)               an output file cannot be written (full disk, no permission)

Messages name the subject, what exists, and what to do next.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
from collections.abc import Iterable, Iterator

__all__ = [
    "ConfigError",
    "EnvClosedError",
    "EnvFileError",
    "EnvNotFound",
    "ExporterNotFound",
    "GraderNotFound",
    "InvalidAction",
    "InvalidStepResult",
    "NotForkable",
    "NotFoundError",
    "OutputError",
    "PluginLoadError",
    "PolicyError",
    "PolicyNotFound",
    "RolloutGymError",
    "RunFileError",
    "SandboxError",
    "SpecError",
    "StateError",
    "TaskNotFound",
    "TemplateNotFound",
    "did_you_mean",
    "json_error_text",
    "output_error",
    "writing_output",
]


class RolloutGymError(Exception):
    """Base class of every error rolloutgym raises on purpose."""


class ConfigError(RolloutGymError, ValueError):
    """Bad user input: an option, an env file, a run file, a config value."""


class EnvFileError(ConfigError):
    """A declarative environment file (``.py``/``.json``/``.jsonl``) is malformed."""


class RunFileError(ConfigError):
    """A run file is corrupt, truncated or does not match the requested run."""


class StateError(ConfigError):
    """An env state (``snapshot()``/``EnvState.from_json``) that is corrupt, hostile or from another env."""


class SpecError(ConfigError):
    """A plugin returned a malformed spec object from a hook."""


class NotFoundError(RolloutGymError, LookupError):
    """Something looked up by name does not exist."""


class EnvNotFound(NotFoundError):
    """No environment is registered under the requested id."""


class PolicyNotFound(NotFoundError):
    """No policy provider is registered under the requested name."""


class TemplateNotFound(NotFoundError):
    """No plugin provides the requested declarative template."""


class GraderNotFound(NotFoundError):
    """No criterion grader / verifier primitive is registered under that name."""


class ExporterNotFound(NotFoundError):
    """No training-data exporter is registered under that format name."""


class TaskNotFound(NotFoundError):
    """An environment has no task with that index or id."""


class PluginLoadError(RolloutGymError, ImportError):
    """A plugin failed to load; carries the distribution, version and cause."""


class InvalidAction(RolloutGymError, ValueError):
    """An action is outside the environment's action space."""


class InvalidStepResult(RolloutGymError, ValueError):
    """An environment returned a NaN/inf reward, a non-bool flag or a non-dict info."""


class EnvClosedError(RolloutGymError, RuntimeError):
    """A method was called on an environment that has been closed."""


class NotForkable(RolloutGymError, TypeError):
    """``fork``/``snapshot``/``restore`` on an env that does not implement them."""


class PolicyError(RolloutGymError, RuntimeError):
    """A policy adapter failed: unreachable server, bad response, unusable model."""


class SandboxError(RolloutGymError, RuntimeError):
    """The sandbox for untrusted code is missing or misconfigured."""


class OutputError(RolloutGymError, OSError):
    """An output file (run file, export, report) cannot be written: a full disk, no permission, no folder."""

    def __str__(self) -> str:  # the message, not OSError's "[Errno N] ..." form
        return str(self.args[0]) if self.args else ""


_OUTPUT_FIXES = {
    errno.ENOSPC: "free some space on that disk, or choose another --out",
    errno.EDQUOT: "free some space under your quota, or choose another --out",
    errno.EFBIG: "the file reached the size limit (ulimit -f); raise it, or choose another --out",
    errno.EACCES: "choose a folder you can write to (--out)",
    errno.EPERM: "choose a folder you can write to (--out)",
    errno.EROFS: "that file system is read-only; choose another --out",
    errno.ENOENT: "its folder does not exist or cannot hold files; choose another --out",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another --out",
    errno.EISDIR: "it is a folder; give a file path for --out",
}


def output_error(path: object, error: OSError, *, what: str = "the output file", done: str = "") -> OutputError:
    """The one-line :class:`OutputError` for ``error`` met writing ``path``: the path, the reason, the fix.

    ``done`` says what is already safe, e.g. "the 3 finished tasks are in it; ... --resume".
    """
    if isinstance(error, OutputError):
        return error
    reason = error.strerror or str(error) or type(error).__name__
    fix = _OUTPUT_FIXES.get(error.errno or 0, "check the path, or choose another --out")
    message = f"cannot write {what} {path}: {reason}; {fix}"
    if done:
        message += f" ({done})"
    result = OutputError(message)
    result.errno, result.strerror, result.filename = error.errno, reason, str(path)
    return result


@contextlib.contextmanager
def writing_output(path: object, *, what: str = "the output file", inputs: Iterable[object] = ()) -> Iterator[None]:
    """Turn an ``OSError`` met while writing ``path`` into its one-line :class:`OutputError`.

    An error whose file name is one of ``inputs`` (a file being read) is left as it is.
    """
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        read = {os.path.abspath(str(item)) for item in inputs}
        if exc.filename is not None and os.path.abspath(os.fsdecode(exc.filename)) in read:
            raise
        raise output_error(path, exc, what=what) from None


def did_you_mean(name: str, candidates: Iterable[str], *, limit: int = 3) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest candidates, or ``""``."""
    matches = difflib.get_close_matches(name, list(candidates), n=limit, cutoff=0.6)
    if not matches:
        return ""
    if len(matches) == 1:
        return f" Did you mean '{matches[0]}'?"
    return " Did you mean one of " + ", ".join(f"'{m}'" for m in matches) + "?"


def json_error_text(error: ValueError) -> str:
    """Say where a :class:`json.JSONDecodeError` happened, e.g. ``"Expecting value at column 3"``.

    The other :class:`ValueError` of :func:`json.loads`, a number past Python's int-to-text
    limit, reads ``"a number has more than 4300 digits"``.

    The decoder's own messages sometimes end in "at" already ("Unterminated string
    starting at"): those get the column without a second "at".
    """
    message = str(getattr(error, "msg", error))
    if "integer string conversion" in message:  # json.loads of a number past Python's digit limit
        digits = re.search(r"limit \((\d+) digits\)", message)
        return f"a number has more than {digits.group(1) if digits else 'the allowed'} digits"
    column = getattr(error, "colno", None)
    if column is None:
        return message
    return f"{message} column {column}" if message.endswith(" at") else f"{message} at column {column}"
