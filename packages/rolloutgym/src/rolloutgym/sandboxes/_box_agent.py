"""The exec agent: runs inside a docker sandbox as its pid 1 (root), started by the container itself.

Not imported by rolloutgym: the docker provider copies this file into a host folder that is
bind-mounted at ``/.rolloutgym`` (mode 0700, root's: the sandbox's unprivileged user cannot reach
it) and starts the container with ``python3 -I -S /.rolloutgym/agent.py`` (``sleep infinity`` where
the image has no usable Python 3.8+). The host connects to ``/.rolloutgym/agent.sock`` from its side
of the mount, one connection per call: a command then costs a fork in the container instead of
the engine's exec (a new ``runc exec`` and its monitor process, ~100-500 ms on podman).

Wire format (one call per connection): the request is one JSON line, followed by ``stdin_size``
bytes of standard input for ``exec``; the answer is one JSON line, followed by ``size`` bytes of
output.

* ``{"op": "exec", "argv": [...], "cwd": "/app", "uid": 1000, "gid": 1000, "env": {...},
  "timeout": 5.0, "max_output": 1048576, "stdin_size": 0}`` -> ``{"exit": 0, "timed_out": false,
  "truncated": false, "size": N}`` and the output (stdout and stderr as they came). Past the
  deadline the command's process group is killed (and, if the output stays open, every process
  but this one).
* ``{"op": "read", "paths": [...], "max_bytes": N}`` -> ``{"files": [[path, size], ...]}`` and
  the files' bytes one after another: the regular files among ``paths`` of at most ``max_bytes``,
  opened one folder at a time without following a link (race-free: a link anywhere on the path
  leaves the file out).
* ``{"op": "ping"}`` -> ``{"ok": true}``.
* ``{"op": "exit"}``: every process of the sandbox is killed, the agent answers and exits (the
  container stops with it).

As pid 1 it also reaps orphaned processes, so a sandbox's zombies do not use up its pids limit.
"""

import json
import os
import selectors
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

FOLDER = os.path.dirname(os.path.abspath(__file__))
SOCKET = os.path.join(FOLDER, "agent.sock")
_lock = threading.Lock()
_mine = {}  # pid -> [wait status or None, threading.Event]


def _reap_forever():
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.05)
            continue
        with _lock:
            entry = _mine.pop(pid, None)
        if entry is not None:
            entry[0] = status
            entry[1].set()


def _answer(conn, header, payload=b""):
    header = dict(header, size=len(payload))
    conn.sendall(json.dumps(header).encode() + b"\n" + payload)


def _spawn(request, stdin):
    env = dict(os.environ)
    env.update(request.get("env") or {})
    options = {}
    uid, gid = int(request.get("uid", 0)), int(request.get("gid", 0))
    if uid or gid:
        options = {"user": uid, "group": gid, "extra_groups": []}
    with _lock:
        process = subprocess.Popen(
            request["argv"],
            cwd=request.get("cwd") or "/",
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **options,
        )
        entry = _mine[process.pid] = [None, threading.Event()]
    if stdin:
        threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True).start()
    return process, entry


def _feed(pipe, data):
    try:
        pipe.write(data)
        pipe.close()
    except OSError:
        pass


def _collect(process, deadline, limit):
    """Read the output until it closes or the deadline; (kept bytes, truncated, timed out)."""
    kept, truncated = bytearray(), False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return bytes(kept), truncated, True
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                return bytes(kept), truncated, False
            truncated = truncated or len(kept) + len(chunk) > limit
            kept += chunk[: max(0, limit - len(kept))]


def _kill(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def _exec(conn, request, stdin):
    try:
        process, entry = _spawn(request, stdin)
    except OSError as exc:
        code = 126 if isinstance(exc, PermissionError) else 127
        _answer(conn, {"exit": code, "timed_out": False, "truncated": False}, f"{exc}\n".encode())
        return
    deadline = time.monotonic() + float(request.get("timeout", 60))
    kept, truncated, timed_out = _collect(process, deadline, int(request.get("max_output", 1 << 20)))
    if timed_out:
        _kill(process)
        if _collect(process, time.monotonic() + 1.0, 0)[2]:  # something outside the group holds the output
            os.kill(-1, signal.SIGKILL)
    elif not entry[1].wait(max(0.0, deadline - time.monotonic())):
        timed_out = True
        _kill(process)
    entry[1].wait(5.0)
    process.stdout.close()
    process.returncode = 0  # reaped here, not by Popen
    status = entry[0]
    code = -1 if status is None else os.waitstatus_to_exitcode(status)
    _answer(conn, {"exit": 128 - code if code < 0 else code, "timed_out": timed_out, "truncated": truncated}, kept)


def _read_plain(path, limit):
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes reached through
    folders only (no link on the way), else None."""
    parts = [part for part in path.split("/") if part]
    if not path.startswith("/") or not parts or ".." in parts:
        return None
    folder = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        handle = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(handle)
        return None
    with os.fdopen(handle, "rb") as file:
        data = file.read(limit + 1)
    return data if len(data) <= limit else None


def _read(conn, request):
    found, payload = [], []
    for path in request.get("paths") or []:
        data = _read_plain(os.path.normpath(path), int(request.get("max_bytes", 16 << 20)))
        if data is not None:
            found.append([path, len(data)])
            payload.append(data)
    _answer(conn, {"files": found}, b"".join(payload))


def _serve(conn):
    with conn, conn.makefile("rb") as reader:
        request = json.loads(reader.readline() or b"{}")
        op = request.get("op")
        if op == "exec":
            stdin = reader.read(int(request.get("stdin_size", 0))) if request.get("stdin_size") else b""
            _exec(conn, request, stdin)
        elif op == "read":
            _read(conn, request)
        elif op == "ping":
            _answer(conn, {"ok": True})
        elif op == "exit":
            _answer(conn, {"ok": True})
            conn.close()
            os.kill(-1, signal.SIGKILL)
            os._exit(0)
        else:
            _answer(conn, {"error": "unknown op " + repr(op)})


def _serve_safely(conn):
    try:
        _serve(conn)
    except Exception as exc:  # noqa: BLE001 - one bad call must not stop the agent
        sys.stderr.write("rolloutgym agent: " + repr(exc) + "\n")


def main():
    threading.Thread(target=_reap_forever, daemon=True).start()
    if os.path.exists(SOCKET):
        os.unlink(SOCKET)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(SOCKET)
    os.chmod(SOCKET, 0o600)
    server.listen(128)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve_safely, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # noqa: BLE001 - no agent: the host falls back to the engine's exec
        sys.stderr.write("rolloutgym agent stopped: " + repr(exc) + "\n")
        with open(os.path.join(FOLDER, "no-agent"), "w") as marker:
            marker.write(repr(exc))
        os.execvp("sleep", ["sleep", "infinity"])
