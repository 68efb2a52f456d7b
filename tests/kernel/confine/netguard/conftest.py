"""Shared parts for the netguard tests: fake resolvers, a dial recorder, a real local server."""

from __future__ import annotations

import http.server
import socket
import threading
import typing
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import parse_qs, urlsplit

import httpcore
import pytest

PUBLIC = "93.184.216.34"


class MapResolver:
    """Answers from a table; an unknown name fails like DNS does."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = dict(table)
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        return list(self.table[host])


class SequenceResolver:
    """Answers each lookup of a name with the next answer: the DNS-rebinding attacker."""

    def __init__(self, answers: Sequence[Sequence[str]]) -> None:
        self.answers = [list(a) for a in answers]
        self.calls = 0

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return answer


class Recorder(httpcore.AsyncNetworkBackend):
    """Inner backend that records every real dial; `live=False` never opens a socket."""

    def __init__(self, *, live: bool = True, redirect_to: tuple[str, int] | None = None) -> None:
        self.dials: list[tuple[str, int]] = []
        self.live = live
        self.redirect_to = redirect_to
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dials.append((host, port))
        if not self.live:
            raise httpcore.ConnectError("recorder: no network in this test")
        if self.redirect_to is not None:
            host, port = self.redirect_to
        return await self._real.connect_tcp(host, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("never used")

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


class LocalServer:
    """A real HTTP server on 127.0.0.1: /ok answers, /redirect?to=X redirects to X."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, str]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits.append((self.path, self.headers.get("Host", "")))
                parts = urlsplit(self.path)
                if parts.path == "/redirect":
                    target = parse_qs(parts.query)["to"][0]
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"ok"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: typing.Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str = "/ok") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    srv = LocalServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.server.shutdown()
        srv.server.server_close()
        srv.thread.join(5)


@pytest.fixture
def other_server() -> Iterator[LocalServer]:
    srv = LocalServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.server.shutdown()
        srv.server.server_close()
        srv.thread.join(5)
