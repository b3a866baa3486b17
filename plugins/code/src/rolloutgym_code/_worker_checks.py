"""The tamper checks of the sandboxed pytest worker (:mod:`rolloutgym_code._worker`).

Snapshots taken before the tests run (the watched modules' and their classes' dictionaries,
the recorder's code, defaults and cells), and the comparisons made after pytest returns,
with signals blocked and ``gc`` off: a changed or replaced module, class or recorder, an
added or removed hook implementation, a thread still running, or results that are not the
ones the recorder wrote are each reported as tampering.

This file is not imported in the sandbox: the worker's source is this file's followed by
``_worker.py``'s (``testrun._harness_config``), run as one script with ``python -I -c``, so
these functions are rebound to the worker's private globals like its own.
"""

import hashlib
import sys
from _thread import _count as _python_threads  # C function: threads still able to run Python code


def _cells_of(function):
    return (
        function.__code__,
        function.__defaults__,
        tuple(cell.cell_contents for cell in (function.__closure__ or ())),
    )


def _module_snapshot(guard_module):
    """The watched modules with a copy of their dictionaries, and their classes with a copy
    of theirs."""
    watched = {}
    for name, module in dict(sys.modules).items():
        if module is None:
            continue
        if name in ("builtins", "pytest", "pluggy", "json", "hmac", "hashlib", guard_module) or name.startswith(
            ("_pytest.", "pluggy.")
        ):
            watched[name] = (module, dict(vars(module)))
    classes = {}
    for name, (_module, namespace) in watched.items():
        for value in namespace.values():
            if isinstance(value, type) and getattr(value, "__module__", "") == name:
                classes[id(value)] = (value, dict(vars(value)))
    return watched, classes


def _thread_problems():
    """A thread started by the code under test that still runs is tampering.

    The kernel's count includes a thread that has been joined but whose OS thread is still
    winding down (seconds on a loaded machine): it has left Python for good, so it counts only
    while the interpreter's own count of threads that can run Python code (``_thread._count``,
    captured before any code under test ran) is above zero."""
    try:
        with open("/proc/self/status", "rb") as handle:
            threads = [line for line in handle.read().split(b"\n") if line.startswith(b"Threads:")]
        if threads and int(threads[0].split()[1]) > 1 and _python_threads() > 0:
            return ["a thread started by the code under test was still running when the tests ended"]
    except (OSError, ValueError, RuntimeError):
        return ["could not check for leftover threads"]
    return []


def _module_problems(modules_before, modules_after):
    problems = []
    missing = object()
    for name, (module, namespace) in modules_before.items():
        if sys.modules.get(name) is not module:
            problems.append(f"module {name} was replaced")
            continue
        current = modules_after.get(name, (None, {}))[1]
        changed = sorted(
            attribute
            for attribute in set(namespace) | set(current)
            if namespace.get(attribute, missing) is not current.get(attribute, missing)
            and not attribute.startswith("__")
        )
        if changed:
            problems.append(f"{name} was modified ({', '.join(changed[:5])})")
    return problems


def _class_problems(classes_before):
    problems = []
    missing = object()
    for cls, namespace in classes_before.values():
        current = dict(vars(cls))
        changed = [
            attribute
            for attribute in namespace
            if namespace[attribute] is not current.get(attribute, missing)
            and attribute not in ("__abstractmethods__", "_abc_impl", "__weakref__", "__dict__")
        ]
        changed += [  # an added attribute may override a base class's method
            attribute
            for attribute in current
            if attribute not in namespace
            and attribute != "_pytest_diamond_inheritance_warning_shown"  # pytest's NodeMeta sets it
            and (attribute.startswith("__") or any(attribute in vars(base) for base in cls.__mro__[1:]))
        ]
        if changed:
            problems.append(f"class {cls.__qualname__} was modified ({', '.join(sorted(changed)[:5])})")
    return problems


def _recorder_problems(cells_before):
    problems = []
    for function, before in cells_before:
        after = _cells_of(function)
        if (
            any(a is not b for a, b in zip(before[2], after[2], strict=False))
            or before[0] is not after[0]
            or before[1] is not after[1]
        ):
            problems.append("the test recorder was modified")
    return problems


def _hookimpl_problems(hook, hookimpls_before, trusted_prefixes):
    problems = []
    for name, functions in hookimpls_before.items():
        now = tuple(impl.function for impl in getattr(hook, name).get_hookimpls())
        added = [function for function in now if function not in functions]
        for function in added:
            filename = getattr(getattr(function, "__code__", None), "co_filename", "")
            # pytest registers its session and the task's conftest files while it runs
            if not filename.startswith(trusted_prefixes):
                problems.append(f"a hook implementation was added for {name}")
                break
        if any(function not in now for function in functions):
            problems.append(f"a hook implementation was removed from {name}")
    return problems


def _checked_results(results, digest):
    """The recorded result lines, and a problem if they are not what the recorder wrote."""
    problems = []
    lines = list(results)
    check = hashlib.sha256()
    for line in lines:
        if type(line) is not str:
            problems.append("a result that the recorder did not write")
            break
        check.update(line.encode("utf-8", "surrogatepass") + b"\n")
    if check.hexdigest() != digest.hexdigest():
        problems.append("the recorded results were changed")
    return lines, problems
