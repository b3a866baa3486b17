"""The harness command as the shell will see it, and what to say when it never ran.

The harness runs in its work folder (a fresh temporary folder by default), not in the folder
``rolloutgym run`` was started in, so ``python my_agent.py`` would look for the script in the wrong
place. :func:`resolve_relative` rewrites a relative path in the command template to an absolute one
when the file exists in the caller's folder and not in the work folder (a program name on ``PATH``
and anything with shell syntax or template fields is left alone). :func:`never_ran` is the error
for a harness that exited (non-zero or by a signal) before making any model or tool call: such an
episode is a recorded error, never a reward of 0.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from rolloutgym_protocol.errors import PolicyError

__all__ = ["never_ran", "resolve_relative"]

_SEPARATORS = frozenset({";", "|", "||", "&&", "&", "(", "then", "do", "else", "exec", "env", "nice", "time"})
_SHELL = set("{}'\"\\$`*?=<>|;&()~")


def _is_path_word(word: str, command_position: bool, origin: Path, workdir: Path) -> bool:
    if word.startswith(("-", "/")) or _SHELL.intersection(word):
        return False
    if command_position and "/" not in word:  # a program name: the shell looks it up on PATH
        return False
    return (origin / word).is_file() and not (workdir / word).exists()


def resolve_relative(command: str, origin: str, workdir: str) -> str:
    """``command`` with each relative file path that exists in ``origin`` (the caller's folder)
    but not in ``workdir`` made absolute (shell-quoted); the rest of the text unchanged."""
    origin_path, workdir_path = Path(origin), Path(workdir)
    pieces: list[str] = []
    last = 0
    previous: str | None = None
    for match in re.finditer(r"\S+", command):
        word = match.group()
        command_position = previous is None or previous in _SEPARATORS or previous.endswith(";")
        previous = word
        if _is_path_word(word, command_position, origin_path, workdir_path):
            pieces += [command[last : match.start()], shlex.quote(str((origin_path / word).resolve()))]
            last = match.end()
    pieces.append(command[last:])
    return "".join(pieces)


def never_ran(
    command: str, code: int | None, stderr: str, workdir: str, sandboxed: bool, container: bool = False
) -> PolicyError:
    """The error for a harness that ended before any model or tool call, naming the command and the fix."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    said = f": {lines[-1][:300]}" if lines else " (it printed nothing on stderr)"
    how = f"exited with code {code}"
    if code is not None and (code < 0 or 128 < code < 160):  # the shell reports a signal as 128 + N
        how = f"was killed by signal {-code if code < 0 else code - 128} ({how})"
    if code == 127:
        fix = "the program was not found: install it, or give its absolute path"
    elif container:
        fix = (
            "it ran in the task's container (its stderr above); a model call the endpoint refused (a prompt "
            "past the model's context, say) also ends a CLI this way: check the model"
        )
    elif sandboxed:
        fix = "in the sandbox the harness sees only its work folder and the allowed packages: put its files there"
    else:
        fix = (
            f"it runs in {workdir}; a relative path in the command is resolved against the folder "
            "`rolloutgym run` was started in only when the file is there: check the path, or make it absolute"
        )
    return PolicyError(f"harness command {command!r} {how} before making any model call{said}; {fix}")
