"""Run inside an isolated sandbox (standard library only, ``python -I -S``): listen on ``127.0.0.1:PORT`` and relay
each connection to a Unix socket bound in from the host, then run the command and exit with its status.

``python -I -S _forward.py SOCKET PORT COMMAND...``: the sandbox has no network, so this is how the code in it
reaches one service the host chose (:class:`rolloutgym.sandboxes.CredentialProxy`), and nothing else.
"""

import socket
import subprocess
import sys
import threading


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()


def main() -> None:
    path, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    code = subprocess.call(command, close_fds=False)  # a pipe the host passed (pass_fds) reaches the command
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
