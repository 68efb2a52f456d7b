"""The in-sandbox bridge: 127.0.0.1:<port> inside the sandbox → the egress proxy's unix socket.

`python -I -m yagent.tools.egress.sandboxbridge --socket PATH --port N [--tag TAG] -- COMMAND...`
runs INSIDE the sandbox, whose network namespace has only `lo`: it listens on 127.0.0.1:N (the
proxy URL the command's proxy variables name), forwards each connection byte for byte to the
proxy's socket (bound into the sandbox) — with `--tag`, after announcing the command's tag as the
first line (`tag_line`: `YAGENT-TAG <32 lowercase hex digits>\r\n`, the one definition of that wire
form; the proxy attributes the connection's decisions to the command by it) — runs COMMAND as its
child (stdin, stdout and stderr inherited), forwards SIGTERM, SIGINT and SIGHUP to it, and exits
with its exit code (128 + N when a signal N killed it, as a shell reports it). The listener is
bound before the command starts, so its first request finds it. The bridge judges nothing — the
proxy does — and it is only the standard library: it runs on the host's interpreter, read-only,
with `-I` so neither the environment nor the working directory (the workspace) can put modules in
front of it. Its package (`tools.egress`) imports nothing on load, so starting it loads no proxy.
Its messages still name it `egressbridge` (what a person sees is unchanged).
Exit 125 (with a line on stderr) when the bridge itself cannot start (bad arguments, port taken);
127 when COMMAND cannot be started.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

CHUNK = 65536
SETUP_FAILED = 125
NOT_STARTED = 127
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
TAG_WORD = "YAGENT-TAG"
TAG_DIGITS = 32


USAGE = "usage: egressbridge --socket PATH --port N [--tag TAG] -- COMMAND..."


def valid_tag(tag: str) -> bool:
    return len(tag) == TAG_DIGITS and all(c in "0123456789abcdef" for c in tag)


def tag_line(tag: str) -> bytes:
    """What the bridge sends the proxy before a tagged connection's own bytes."""
    if not valid_tag(tag):
        raise ValueError(f"a tag is {TAG_DIGITS} lowercase hex digits")
    return f"{TAG_WORD} {tag}\r\n".encode("ascii")


def _arguments(argv: Sequence[str]) -> tuple[str, int, str | None, list[str]]:
    words = list(argv)
    tag = None
    if len(words) > 5 and words[4] == "--tag":
        tag = words.pop(5)
        del words[4]
        if not valid_tag(tag):
            raise ValueError(f"bad tag; {USAGE}")
    if len(words) < 6 or words[0] != "--socket" or words[2] != "--port" or words[4] != "--":
        raise ValueError(USAGE)
    port = int(words[3]) if words[3].isascii() and words[3].isdigit() else 0
    if not 0 < port < 65536 or not words[1]:
        raise ValueError(f"bad socket or port; {USAGE}")
    return words[1], port, tag, words[5:]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def _relay(
    socket_path: str,
    announce: bytes,
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
) -> None:
    try:
        proxy_reader, proxy_writer = await asyncio.open_unix_connection(socket_path)
    except OSError as exc:
        print(f"egressbridge: cannot reach the egress proxy: {exc}", file=sys.stderr)
        client_writer.close()
        return
    try:
        proxy_writer.write(announce)  # before any of the client's bytes
        await asyncio.gather(_pipe(client_reader, proxy_writer), _pipe(proxy_reader, client_writer))
    finally:
        for writer in (proxy_writer, client_writer):
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def bridge(
    socket_path: str, port: int, command: Sequence[str], tag: str | None = None
) -> int:
    """Serve 127.0.0.1:`port` → `socket_path` while `command` runs (each connection announced
    with `tag` when given); its exit code."""
    relays: set[asyncio.Task[None]] = set()
    announce = b"" if tag is None else tag_line(tag)

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(_relay(socket_path, announce, reader, writer))
        relays.add(task)
        task.add_done_callback(relays.discard)

    # Signals are caught before the port is bound: a signal that arrives once the bridge is
    # reachable but before the command runs is held and forwarded, never fatal to the bridge.
    loop = asyncio.get_running_loop()
    held: list[int] = []
    child: asyncio.subprocess.Process | None = None

    def forward(signum: int) -> None:
        if child is None:
            held.append(signum)
        else:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signum)

    for signum in FORWARDED:
        loop.add_signal_handler(signum, forward, signum)
    try:
        server = await asyncio.start_server(accepted, "127.0.0.1", port)
        try:
            try:
                child = await asyncio.create_subprocess_exec(*command)
            except OSError as exc:
                print(f"egressbridge: cannot run {command[0]!r}: {exc}", file=sys.stderr)
                return NOT_STARTED
            for pending in held:
                forward(pending)
            code = await child.wait()
            return 128 - code if code < 0 else code
        finally:
            server.close()
            for task in list(relays):
                task.cancel()
            await asyncio.gather(*relays, return_exceptions=True)
    finally:
        for signum in FORWARDED:
            loop.remove_signal_handler(signum)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        socket_path, port, tag, command = _arguments(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"egressbridge: {exc}", file=sys.stderr)
        return SETUP_FAILED
    try:
        return asyncio.run(bridge(socket_path, port, command, tag))
    except OSError as exc:  # the port could not be bound
        print(f"egressbridge: cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
        return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main())
