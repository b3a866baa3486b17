"""The ``rolloutgym`` command line (``rollout-run`` is ``rolloutgym run``).

Exit codes: 0 success, 1 the run had errors, 2 usage or configuration error.
User mistakes print ``error: ...`` with the fix, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# Command modules register themselves on ``app`` when imported.
from . import check, listing, running, runs, runs_data  # noqa: E402,F401
from ._app import EXIT_USAGE, app, error_console, markup_safe

COMMAND_MODULES = ["report", "serve", "platform"]

for _name in COMMAND_MODULES:
    try:
        __import__(f"{__name__}.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"{__name__}.{_name}":
            raise

__all__ = ["app", "main", "run_main"]


def remote_run_arguments(arguments: list[str]) -> list[str]:
    """``run ... --remote`` is the platform's ``run-remote`` command (rolloutgym.cli.platform)."""
    if arguments[:1] == ["run"] and "--remote" in arguments:
        return ["run-remote", *[argument for argument in arguments[1:] if argument != "--remote"]]
    return arguments


# The rollout SDK's spellings of `run` options, read as ours (an option is one word: --model X or --model=X).
SEED_SPELLINGS = {"--model": "--policy", "--n": "-n", "--temperature": "--policy-arg temperature="}


def seed_spellings(arguments: list[str]) -> list[str]:
    """``run --model M --n 50 --temperature 0.0`` (the rollout SDK's spellings) as ``run --policy M -n 50
    --policy-arg temperature=0.0``; other commands unchanged."""
    if arguments[:1] not in (["run"], ["run-remote"]):
        return arguments
    read: list[str] = []
    words = iter(arguments)
    for word in words:
        name, equals, value = word.partition("=")
        ours = SEED_SPELLINGS.get(name)
        if ours is None:
            read.append(word)
            continue
        value = value if equals else next(words, "")
        read += [ours.split(" ")[0], ours.split(" ")[1] + value] if " " in ours else [ours, value]
    return read


def seed_test_command(arguments: list[str]) -> str | None:
    """The rollout SDK's ``rollout test FILE --model M --task 0 --temperature 0.0``: the message naming ours."""
    if arguments[:1] != ["test"]:
        return None
    ours = seed_spellings(["run", *arguments[1:]])
    if "-n" not in ours and "--num-rollouts" not in ours:
        ours += ["-n", "1"]
    return "rolloutgym has no 'test' command; a local rollout of a task is: rolloutgym " + " ".join(ours)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rolloutgym``; returns the exit code."""
    from rolloutgym_protocol.errors import RolloutGymError

    try:
        arguments = seed_spellings(remote_run_arguments(list(argv) if argv is not None else sys.argv[1:]))
        seed_test = seed_test_command(arguments)
        if seed_test is not None:
            error_console.print(f"[bold red]error:[/] {markup_safe(seed_test)}", markup=True)
            return EXIT_USAGE
        add_plugin_commands(arguments)
        absent = absent_command(arguments)
        if absent is not None:
            error_console.print(f"[bold red]error:[/] {markup_safe(absent)}", markup=True)
            return EXIT_USAGE
        app(args=arguments, prog_name="rolloutgym", standalone_mode=True)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        error_console.print(str(exc.code))
        return 1
    except RolloutGymError as exc:
        error_console.print(f"[bold red]error:[/] {type(exc).__name__}: {markup_safe(exc)}", markup=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        error_console.print("interrupted")
        return 130
    except OSError as exc:
        # The last net: a file or system error no command turned into its own message (they do for
        # their --out files). One line with the file, never a traceback.
        error_console.print(f"[bold red]error:[/] {markup_safe(os_error_text(exc))}", markup=True)
        return 1
    return 0


def os_error_text(exc: OSError) -> str:
    """``OSError`` as one line: the reason, the file(s) it names, and what to check."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    files = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
    where = f" ({' -> '.join(files)})" if files else ""
    return f"{reason}{where}; check that path (its folder, permissions and free space) and try again"


_plugin_commands_added = False


def add_plugin_commands(arguments: Sequence[str]) -> None:
    """Let plugins add command groups (hook ``rolloutgym_commands``), once per process.

    Skipped when the command is one of the core's own, so ``rolloutgym list`` and
    ``rolloutgym run`` do not pay for it.
    """
    global _plugin_commands_added
    core = {
        command.name or command.callback.__name__.replace("_", "-")
        for command in app.registered_commands
        if command.callback
    }
    core |= {group.name for group in app.registered_groups if group.name}
    if _plugin_commands_added or (arguments and arguments[0] in core):
        return
    _plugin_commands_added = True
    from ..registry import get_registry

    get_registry().register_commands(app)


# Command groups that another distribution of this project adds (hook ``rolloutgym_commands``): when it is not
# installed, the command's name says what to install instead of "No such command".
PLUGIN_COMMANDS = {"platform": "rolloutgym-platform", "tasks": "rolloutgym-code", "train": "rolloutgym-trl"}


def absent_command(arguments: Sequence[str]) -> str | None:
    """The one-line install hint for ``rolloutgym platform|tasks|train ...`` when no plugin added that group."""
    name = arguments[0] if arguments else ""
    distribution = PLUGIN_COMMANDS.get(name)
    if distribution is None or any(group.name == name for group in app.registered_groups):
        return None
    from ..install_hints import pip_install

    return f"'rolloutgym {name}' comes with the {distribution} distribution; install it: {pip_install(distribution)}"


def run_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rollout-run`` (= ``rolloutgym run``)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    return main(["run", *arguments])


def console_main() -> None:
    """Console-script wrapper for ``rolloutgym``."""
    sys.exit(main())


def console_run_main() -> None:
    """Console-script wrapper for ``rollout-run``."""
    sys.exit(run_main())
