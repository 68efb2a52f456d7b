"""One MCP server's connection, kept alive for the app's lifetime and re-made when it breaks.

Contract:
- `Link.run()` is the only task that opens and closes the server's transport and session, so a
  transport that fails — at start or mid-session, stdio or HTTP — fails inside it and nowhere
  else: it is recorded (`error`, reported once per outage through `report`), the link waits with
  backoff (`BACKOFF`, a seam) and connects again. Nothing the server does escapes to the host.
- `session()` gives the live session to a call; when the server is down it asks for an immediate
  attempt and waits at most `startup_timeout`, then raises `ServerUnavailable` — the request was
  never sent.
- `lost()` is called by a call that saw the connection break: the link tears down and reconnects.
- Each attempt is bounded by the server's `startup_timeout` (connect, handshake, tool listing).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from yagent.tools.mcp.config import McpConfigError, ServerConfig

BACKOFF: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # seconds between attempts
Report = Callable[[str, str], None]
SessionFactory = Callable[[Any, Any], ClientSession]


class ServerUnavailable(Exception):
    """The server is not connected; the request was not sent."""


def describe(exc: BaseException) -> str:
    """One line for a failure, looking inside exception groups for the first real cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class Link:
    def __init__(self, config: ServerConfig, report: Report, factory: SessionFactory) -> None:
        self.config = config
        self.error = ""
        self.protocol = ""
        self.tools: list[Any] = []
        self.listed = anyio.Event()  # set once the first attempt ended (connected or not)
        self._report = report
        self._factory = factory
        self._session: ClientSession | None = None
        self._connected = anyio.Event()
        self._lost = anyio.Event()
        self._wake = anyio.Event()
        self._outage_reported = False

    @property
    def up(self) -> bool:
        return self._session is not None

    async def run(self) -> None:
        failures = 0
        while True:
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed below
            try:
                async with AsyncExitStack() as stack:
                    session = await self._open(stack, errlog)
                    self._session, self.error, failures = session, "", 0
                    self._outage_reported = False
                    self._connected.set()
                    self.listed.set()
                    await self._lost.wait()
                    self._down("the connection was lost")
            except Exception as exc:
                self._down(describe(exc) + _tail(errlog))
            finally:
                errlog.close()
            self.listed.set()
            with anyio.move_on_after(BACKOFF[min(failures, len(BACKOFF) - 1)]):
                await self._wake.wait()
            failures += 1
            self._wake, self._lost = anyio.Event(), anyio.Event()

    def _down(self, reason: str) -> None:
        if self._session is None and self.error:  # still down: keep the first reason
            return
        self._session = None
        self._connected = anyio.Event()
        self.error = reason
        if not self._outage_reported:
            self._outage_reported = True
            self._report(self.config.name, self.error)

    def lost(self, reason: str) -> None:
        """A call saw the connection break: no later call is sent to this session."""
        if self._session is None:
            return
        self._lost.set()
        self._down(reason)

    async def session(self) -> ClientSession:
        if self._session is not None:
            return self._session
        self._wake.set()
        with anyio.move_on_after(self.config.startup_timeout):
            await self._connected.wait()
        if self._session is None:
            raise ServerUnavailable(
                f"MCP server {self.config.name} unavailable: {self.error or 'not connected'} "
                "(the request was not sent; yagent reconnects with backoff)"
            )
        return self._session

    async def _open(self, stack: AsyncExitStack, errlog: Any) -> ClientSession:
        config = self.config
        if config.url is not None:
            try:
                headers = config.resolved_headers()
            except McpConfigError as exc:
                raise ServerUnavailable(str(exc)) from None
            client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=config.tool_timeout)
            )
            streams = await stack.enter_async_context(
                streamable_http_client(config.url, http_client=client)
            )
            read, write = streams[0], streams[1]
        else:
            assert config.command is not None
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) if config.env is not None else None,
                cwd=Path(config.cwd) if config.cwd else None,
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog))
        session = await stack.enter_async_context(self._factory(read, write))
        # bounded here, not around the contexts entered above: cancel scopes must nest
        with anyio.fail_after(config.startup_timeout):
            init = await session.initialize()
            listed = await session.list_tools()
        self.protocol = str(init.protocol_version)
        self.tools = list(listed.tools)
        return session


def _tail(errlog: Any) -> str:
    if errlog.closed:
        return ""
    errlog.seek(0)
    tail = errlog.read()[-500:].strip()
    return f" | stderr: {tail}" if tail else ""
