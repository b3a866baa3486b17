"""The pytest worker of a sandboxed test run (its source, after :mod:`rolloutgym_code._worker_checks`'s,
is run with ``python -I -c``).

This is the one process where the code under test runs, so it is treated as hostile
territory. Everything that decides the result lives in the local variables of ``_main`` and
in closures made before the tests run (out of reach of the code under test: frames, ``gc``
and ``ctypes`` are blocked for it). The functions here look their names up in a private
globals dict with a private copy of the builtins (made by ``_isolated`` at the end of this
file): the code under test can reach ``__main__`` and ``builtins`` and rebind names there,
but no trusted function reads a name from either. The one exception is the recorder plugin,
which pytest hands to anyone who asks: its functions use a second globals dict over the real
builtins, and that dict is compared before and after like pytest's modules.

* the result key arrives on a start-up pipe that is closed at once; it lives only inside a
  C-level HMAC object held in a local variable;
* an audit hook (``sys.addaudithook``, which cannot be removed) refuses to the code under
  test: frame access (``sys._getframe``, ``tb_frame``, ``gi_frame``, ...), tracing and
  profiling, ``gc`` object walks, ``ctypes``, building or swapping code objects,
  ``fork``, starting processes (during grading), and ``/proc/*/fd``, ``mem``, ``environ``;
* pytest's, pluggy's and the builtins' module and class dictionaries, every registered
  hook implementation and our recorder's own cells are snapshotted before the tests run
  and compared after (:mod:`rolloutgym_code._worker_checks`): any change is tampering;
* results are appended to a list and, in the same order, to a C-level SHA-256 that can
  only grow, so results cannot be rewritten afterwards; every collected test must have
  exactly one result;
* after pytest returns, signals are blocked, ``gc`` is disabled, and a live extra thread is
  tampering; the batch is tagged with the key, written, and the process ends with
  ``os._exit`` so no code under test runs after the write.

A test passes only when its setup, call and teardown all pass; skipped and xfailed tests
are reported as ``skipped`` (the host counts them as not passed for hidden tests).
"""

import ast
import gc
import hashlib
import hmac
import importlib
import json
import os
import signal
import sys

if __name__ != "__main__":  # imported as rolloutgym_code._worker (by readers and linters)
    # As the worker, this file's source runs after _worker_checks.py's, in one script.
    from ._worker_checks import (
        _cells_of,
        _checked_results,
        _class_problems,
        _hookimpl_problems,
        _module_problems,
        _module_snapshot,
        _recorder_problems,
        _thread_problems,
    )


def _main():
    """One test run: the trusted state is this frame's locals (see the module docstring)."""
    _write, _exit = os.write, os._exit
    _dumps = json.dumps
    key_fd, channel_fd = int(sys.argv[1]), int(sys.argv[2])
    options = json.loads(sys.argv[3])
    mac = _keyed_mac(key_fd)
    os.set_inheritable(channel_fd, False)
    sys.argv = ["pytest"]
    guard_module = options.get("guard_module", "")
    _flush = sys.__stdout__.flush
    trusted_dir = options["trusted_dir"]

    import _pytest
    import pluggy
    import pytest

    pytest_dirs = tuple(os.path.dirname(module.__file__) + os.sep for module in (_pytest, pluggy))
    audit = _audit_hook(pytest_dirs, trusted_dir, grading=bool(options.get("grading")))
    results = []
    digest = hashlib.sha256()
    recorder, add, short = _recorder(pytest, results, digest)
    exposed = _recorder.__globals__  # reachable through the recorder's functions: checked after
    exposed_before = dict(exposed)
    hook_functions = [
        value.__func__ if hasattr(value, "__func__") else value for value in vars(type(recorder)).values()
    ]
    hook_functions = [function for function in hook_functions if callable(function)] + [add, short, audit]

    # Import pytest's own modules now, before any code under test can run.
    config = _pytest.config._prepareconfig(list(options["args"]), [recorder])
    if guard_module:
        __import__(guard_module)  # imported now so that its module is watched like pytest's
    modules_before, classes_before = _module_snapshot(guard_module)
    cells_before = [(function, _cells_of(function)) for function in hook_functions]
    hookimpls_before = {
        name: tuple(impl.function for impl in caller.get_hookimpls())
        for name, caller in dict(vars(config.pluginmanager.hook)).items()
        if hasattr(caller, "get_hookimpls")
    }
    sys.addaudithook(audit)
    pytest_exit = 3
    try:
        pytest_exit = config.hook.pytest_cmdline_main(config=config)
    except BaseException as exc:  # noqa: BLE001 - any escape from pytest ends the run, and is reported
        add({"kind": "crash", "message": short(f"{type(exc).__name__}: {exc}")})
    # -- nothing below may run code under test ------------------------------------------
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    gc.disable()
    try:
        _flush()
    except (OSError, ValueError):
        pass
    problems = _thread_problems()
    problems += _module_problems(modules_before, _module_snapshot(guard_module)[0])
    problems += _class_problems(classes_before)
    problems += _recorder_problems(cells_before)
    if set(exposed) != set(exposed_before) or any(exposed[name] is not exposed_before[name] for name in exposed_before):
        problems.append("the test recorder's globals were modified")
    problems += _hookimpl_problems(config.pluginmanager.hook, hookimpls_before, (*pytest_dirs, trusted_dir + "/"))
    lines, changed = _checked_results(results, digest)
    problems += changed
    body = _dumps(
        {
            "pytest_exit": int(pytest_exit) if isinstance(pytest_exit, int) else str(pytest_exit),
            "results": lines,
            "tampering": problems,
        },
        ensure_ascii=False,
    ).encode("utf-8", "surrogatepass")
    mac.update(body)
    payload = mac.hexdigest().encode() + b" " + body + b"\n"
    view = memoryview(payload)
    while view:
        view = view[_write(channel_fd, view) :]
    _exit(0)


def _keyed_mac(key_fd):
    """An HMAC-SHA256 keyed with the 32 bytes on the start-up pipe, which is closed here; the
    key is kept nowhere else."""
    key = b""
    while len(key) < 32:
        chunk = os.read(key_fd, 32 - len(key))
        if not chunk:
            break
        key += chunk
    os.close(key_fd)
    mac = hmac.new(key, digestmod=hashlib.sha256)
    del key
    return mac


def _audit_hook(pytest_dirs, trusted_dir, grading):
    """The audit hook that refuses to the code under test what the module docstring lists."""
    stdlib_ast = ast.__file__
    stdlib_importlib = os.path.dirname(importlib.__file__) + os.sep
    allowed_callers = (*pytest_dirs, "<frozen importlib.")
    state = {"inside": False}
    blocked_process_events = {
        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "pty.spawn", "os.startfile",
    }  # fmt: skip
    blocked_events = {
        "sys.settrace", "sys.setprofile", "sys._current_frames", "sys._current_exceptions", "gc.get_objects",
        "gc.get_referrers", "gc.get_referents", "code.__new__", "os.fork", "os.forkpty", "function.__new__",
        "cpython.PyInterpreterState_Clear", "cpython.run_interactivehook", "sys.setrecursionlimit_",
    }  # fmt: skip
    frame_attributes = {"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "gi_code", "__closure__"}
    guarded_attributes = {"__code__"}  # defaults may change (namedtuple does); our functions are checked after
    proc_words = ("/fd", "/mem", "/environ", "/fdinfo", "/map_files", "/root", "/cwd", "/exe")

    def caller_is_trusted():
        try:
            filename = sys._getframe(2).f_code.co_filename
        except ValueError:
            return False
        return filename.startswith(allowed_callers)

    def compiler_is_trusted():
        """The first caller above ``compile`` that is not ``ast`` or the import system."""
        try:
            frame = sys._getframe(2)
        except ValueError:
            return False
        while frame is not None:
            filename = frame.f_code.co_filename
            if not (filename.startswith(("<frozen importlib.", stdlib_importlib)) or filename == stdlib_ast):
                return filename.startswith((*pytest_dirs, trusted_dir + "/"))
            frame = frame.f_back
        return False

    def audit(event, arguments):
        if state["inside"]:
            return
        state["inside"] = True
        try:
            problem = None
            if event in blocked_events or event.startswith("ctypes."):
                problem = event
            elif event == "sys._getframe" or (event == "object.__getattr__" and arguments[1] in frame_attributes):
                if not caller_is_trusted():
                    raise ValueError(f"{event} is not available to code under test")
            elif event == "object.__setattr__" and arguments[1] in guarded_attributes:
                problem = f"setting {arguments[1]}"
            elif event == "compile" and len(arguments) > 1 and isinstance(arguments[1], str):
                if arguments[1].startswith((*pytest_dirs, trusted_dir + "/")) and not compiler_is_trusted():
                    problem = f"compiling code that claims to come from {arguments[1]}"
            elif grading and event in blocked_process_events:
                problem = f"{event} while the hidden tests run"
            elif event in ("open", "os.listdir", "os.scandir") and arguments and isinstance(arguments[0], (str, bytes)):
                path = arguments[0] if isinstance(arguments[0], str) else arguments[0].decode("utf-8", "replace")
                # every spelling counts: its normal form and where its links lead
                for spelling in (os.path.normpath(os.path.join(os.getcwd(), path)), os.path.realpath(path)):
                    spelling = "/" + spelling.lstrip("/")
                    if spelling.startswith(("/proc/", "/dev/fd")) and (
                        any(word in spelling for word in proc_words) or spelling.startswith("/dev/fd")
                    ):
                        problem = f"{event} {path}"
                    elif event == "open" and (
                        spelling in ("/", "/proc", "/dev")
                        or (spelling.startswith("/proc/") and spelling.count("/") == 2)
                    ):
                        problem = f"{event} {path} (a directory to open the rest from)"
            if problem is not None:
                raise RuntimeError(f"not allowed in the test sandbox: {problem}")
        finally:
            state["inside"] = False

    return audit


def _recorder(pytest, results, digest):
    """The pytest plugin that records one result per test, and the ``add`` and ``short``
    functions it writes with: each result goes to ``results`` and, in the same order, to
    ``digest``."""
    _dumps = json.dumps
    phases = {}

    def add(record):
        line = _dumps(record, ensure_ascii=False, sort_keys=True)
        results.append(line)
        digest.update(line.encode("utf-8", "surrogatepass") + b"\n")

    def short(text):
        text = str(text)
        lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines[-8:])[:600]

    class Recorder:
        @staticmethod
        @pytest.hookimpl(trylast=True)
        def pytest_collection_finish(session):
            add({"kind": "collected", "ids": [item.nodeid for item in session.items]})

        @staticmethod
        def pytest_collectreport(report):
            if report.failed:
                add({"kind": "collect_error", "id": report.nodeid, "message": short(report.longreprtext)})

        @staticmethod
        def pytest_runtest_logreport(report):
            phases.setdefault(report.nodeid, []).append(
                (report.when, report.outcome, bool(getattr(report, "wasxfail", None)), short(report.longreprtext))
            )

        @staticmethod
        def pytest_runtest_logfinish(nodeid, location):
            outcome, message = "passed", ""
            seen_call = False
            for when, phase_outcome, xfail, text in phases.pop(nodeid, []):
                seen_call = seen_call or when == "call"
                if phase_outcome == "failed":
                    outcome, message = ("failed" if when == "call" else "error"), text
                    break
                if phase_outcome == "skipped" or xfail:
                    outcome, message = "skipped", text
                    break
            if outcome == "passed" and not seen_call:
                outcome, message = "error", "the test's call phase never ran"
            add({"kind": "test", "id": nodeid, "outcome": outcome, "message": message})

    return Recorder(), add, short


def _isolated(namespace, exposed_names):
    """The functions and modules of ``namespace``, rebound to a new globals dict that holds a
    private copy of the builtins. Runs before any code under test; nothing it can reach refers
    to the new dict, so rebinding ``__main__.sorted`` or ``builtins.len`` changes no trusted
    function (a change to ``builtins`` is also reported as tampering).

    The functions named in ``exposed_names`` make what the code under test can reach (the
    recorder plugin: a function's ``__globals__`` is readable): they get a globals dict of
    their own, over the real ``builtins`` (watched), which ``_main`` checks after the tests."""
    import builtins
    import types

    private = {"__builtins__": dict(vars(builtins)), "__name__": namespace["__name__"]}
    exposed = {"__builtins__": builtins, "__name__": namespace["__name__"]}
    for name, value in namespace.items():
        if type(value) is types.ModuleType:
            private[name] = exposed[name] = value
        elif type(value) is types.BuiltinFunctionType:
            private[name] = value  # captured C functions (the code under test cannot rebind them here)
        elif type(value) is types.FunctionType:
            home = exposed if name in exposed_names else private
            private[name] = home[name] = types.FunctionType(
                value.__code__, home, name, value.__defaults__, value.__closure__
            )
    return private


_isolated(dict(globals()), {"_recorder"})["_main"]()
