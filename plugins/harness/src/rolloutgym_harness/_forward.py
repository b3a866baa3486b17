"""Inside the harness sandbox: serve 127.0.0.1:PORT by forwarding to the endpoint's Unix socket,
then run the harness command (its exit status is ours).

``python -m rolloutgym_harness._forward SOCKET PORT COMMAND``: the sandbox has its own network
namespace (no route out), so the endpoint is reached through a socket file bound into it, at the
same address the harness was given outside. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def _main(socket_path: str, port: int, command: str) -> int:
    async def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    server = await asyncio.start_server(connect, "127.0.0.1", port)
    async with server:
        process = await asyncio.create_subprocess_shell(command)
        return await process.wait()


def main(argv: list[str] | None = None) -> int:
    socket_path, port, command = (argv if argv is not None else sys.argv[1:])[:3]
    code = asyncio.run(_main(socket_path, int(port), command))
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
