"""The trusted supervisor of a sandboxed test run (its source is run with ``python -I -c``).

It runs inside the sandbox, but the code under test never runs in *this* process:

1. It reads its configuration (per-run nonce, worker source, pytest arguments) from a file
   the host wrote into the workspace, and deletes that file before anything else starts.
2. It makes itself non-dumpable, so that processes of the same uid can neither ptrace it
   nor open its file descriptors through ``/proc/PID/fd``.
3. It starts one worker (``python -I`` running pytest on the code under test) with a fresh
   random key on a start-up pipe and a results pipe; the worker's stdout/stderr come back
   here, never to the sandbox's own output.
4. It accepts exactly one result batch, authenticated with that key (HMAC-SHA256), and
   nothing else on the results pipe; any other byte, a second batch, a bad tag, or no batch
   is reported as a problem and counts as no test passed.
5. It prints the verdict as one line ``ROLLOUTGYM-VERDICT <nonce> <json>`` on its stdout,
   which only it holds: the host ignores anything without the nonce it generated.

Only the standard library is used; this module is never imported by the host process.
"""

import ctypes
import hashlib
import hmac
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import time

_MAX_CHANNEL_BYTES = 8 << 20


def _not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run_worker(config: dict) -> dict:
    key = secrets.token_bytes(32)
    started = time.monotonic()
    process, result_read = _start_worker(config, key)
    streams = _read_streams(
        process,
        result_read,
        deadline=started + float(config["deadline"]),
        keep=int(config["keep_output_bytes"]),
        limit=int(config["max_output_bytes"]),
    )
    _kill(process)
    process.wait()
    process.stdout.close()
    os.close(result_read)
    verdict = {
        "exit_code": process.returncode,
        "timed_out": streams["timed_out"],
        "output_limit_exceeded": streams["too_much"],
        "output": streams["output"].decode("utf-8", errors="replace"),
        "output_bytes": streams["output_total"],
        "duration": time.monotonic() - started,
        "batch": None,
        "problem": None,
    }
    if streams["channel_overflow"]:
        verdict["problem"] = "the code under test flooded the result channel"
        return verdict
    verdict["batch"], verdict["problem"] = _read_batch(bytes(streams["channel"]), key)
    return verdict


def _start_worker(config: dict, key: bytes) -> tuple[subprocess.Popen, int]:
    """The worker process, with ``key`` waiting on its start-up pipe, and the read end of its
    results pipe."""
    key_read, key_write = os.pipe()
    result_read, result_write = os.pipe()
    os.write(key_write, key)
    os.close(key_write)
    environment = dict(os.environ)
    environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    process = subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-B",
            "-c",
            config["worker_source"],
            str(key_read),
            str(result_write),
            json.dumps(config["worker"]),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        pass_fds=(key_read, result_write),
        env=environment,
        start_new_session=True,
    )
    os.close(key_read)
    os.close(result_write)
    return process, result_read


def _read_streams(process: subprocess.Popen, result_read: int, *, deadline: float, keep: int, limit: int) -> dict:
    """Read the worker's output and its results pipe until both close, the deadline passes,
    or a limit is hit; keeps the first ``keep`` bytes of output."""
    output = bytearray()
    output_total = 0
    channel = bytearray()
    timed_out = too_much = channel_overflow = False
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ, "output")
    selector.register(result_read, selectors.EVENT_READ, "channel")
    open_streams = 2
    exited_at = None
    while open_streams:
        now = time.monotonic()
        if now >= deadline:
            timed_out = True
            break
        if exited_at is None and process.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > 0.5:
            break  # something the worker started still holds a pipe open: stop listening
        for key_event, _ in selector.select(timeout=min(0.1, deadline - now)):
            descriptor = key_event.fileobj if isinstance(key_event.fileobj, int) else key_event.fileobj.fileno()
            chunk = os.read(descriptor, 65536)
            if not chunk:
                selector.unregister(key_event.fileobj)
                open_streams -= 1
                continue
            if key_event.data == "output":
                output_total += len(chunk)
                if len(output) < keep:
                    output += chunk[: keep - len(output)]
                if output_total > limit:
                    too_much = True
                    open_streams = 0
                    break
            else:
                channel += chunk
                if len(channel) > _MAX_CHANNEL_BYTES:
                    channel_overflow = True
                    open_streams = 0
                    break
    selector.close()
    return {
        "output": output,
        "output_total": output_total,
        "channel": channel,
        "timed_out": timed_out,
        "too_much": too_much,
        "channel_overflow": channel_overflow,
    }


def _read_batch(channel: bytes, key: bytes):
    """The one authenticated batch on the channel, or a problem."""
    if not channel:
        return None, None
    lines = channel.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if len(lines) != 1:
        return None, "the result channel held data that the test harness did not write (tampering)"
    tag, _, body = lines[0].partition(b" ")
    expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(tag, expected):
        return None, "the result channel held data that the test harness did not write (tampering)"
    try:
        return json.loads(body), None
    except ValueError:
        return None, "the result batch could not be read"


def main() -> None:
    config_path = sys.argv[1]
    with open(config_path, "rb") as handle:
        config = json.loads(handle.read())
    os.unlink(config_path)
    nonce = config["nonce"]
    _not_dumpable()
    verdict = _run_worker(config)
    line = ("\nROLLOUTGYM-VERDICT " + nonce + " " + json.dumps(verdict) + "\n").encode()
    view = memoryview(line)
    while view:
        view = view[os.write(1, view) :]


main()
