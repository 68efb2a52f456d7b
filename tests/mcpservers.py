"""The real third-party MCP servers the tests run against, and how to start them.

Installed by `make test` (`scripts/setup-mcp.sh`: `@modelcontextprotocol/server-everything`,
`server-filesystem`, `server-memory` from npm, pinned by `scripts/mcp-servers/package-lock.json`,
into `.cache/mcp-servers`) and the `dev` extra (`mcp-server-time` from PyPI). A missing install is
a failure that says how to install, never a skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".cache" / "mcp-servers" / "node_modules" / ".bin"


def server_bin(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `bash scripts/setup-mcp.sh` (make test does)")
    return str(path)


def everything_stdio() -> dict[str, Any]:
    return {"command": server_bin("mcp-server-everything"), "args": ["stdio"]}


def filesystem(root: Path) -> dict[str, Any]:
    return {"command": server_bin("mcp-server-filesystem"), "args": [str(root)]}


def memory(path: Path) -> dict[str, Any]:
    return {"command": server_bin("mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(path)}}


def time_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def toml_table(name: str, table: Mapping[str, Any]) -> str:
    """`[mcp.<name>]` for a config file."""
    lines = [f"[mcp.{name}]"]
    for key, value in table.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class HttpServer:
    """server-everything over streamable HTTP on a loopback port; stop() and start() again."""

    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        env = {**os.environ, "PORT": str(self.port)}
        self.proc = subprocess.Popen(
            [server_bin("mcp-server-everything"), "streamableHttp"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        pytest.fail("server-everything (streamableHttp) did not listen within 30 s")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def everything_http() -> Iterator[HttpServer]:
    server = HttpServer(free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
