"""OAuth 2.1 with PKCE for HTTP servers that require it (`oauth = true` in `[mcp.<name>]`), through
the official SDK's `OAuthClientProvider` (discovery, dynamic client registration, PKCE, refresh).

Contract:
- Tokens and the registered client live in `<auth_dir>/<server>.json`: the directory 0700, the
  file 0600, written atomically (a temporary file renamed over it). Their values are never shown,
  logged or published; a file that cannot be read counts as "not signed in".
- Signing in: the authorization URL (it holds no secret) is printed to stderr and opened in the
  person's browser (`webbrowser`, so `$BROWSER` is honoured); the code comes back to a loopback
  redirect `http://127.0.0.1:<port>/callback` (the port of the registered client, reused) that
  listens only while waiting — within the server's `startup_timeout` (raise it for a first
  sign-in) and at most `SIGN_IN_TIMEOUT` seconds. The SDK checks `state` and the PKCE
  verifier. A sign-in that does not finish makes the server unavailable with that reason (the
  run goes on, `tools.mcp.link`).
- Refused: `oauth` on a stdio server (a configuration error in `config`).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from yagent.tools.mcp.config import ServerConfig

SIGN_IN_TIMEOUT = 300.0  # seconds the loopback redirect waits for the browser
_PAGE = b"yagent: signed in; you may close this window.\n"


class FileTokens(TokenStorage):
    """One server's tokens and registered client, in one private file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, key: str, value: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        data = self._read() | {key: value}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def registered_port(self) -> int | None:
        """The loopback port of the redirect URI registered before (the client is reused)."""
        uris = (self._read().get("client") or {}).get("redirect_uris") or []
        port = urlsplit(str(uris[0])).port if uris else None
        return port if isinstance(port, int) else None

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client")
        return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))


class _Redirect:
    """The loopback redirect: bound when the browser is sent, answered once."""

    def __init__(self, server: str, port: int | None) -> None:
        self.server = server
        if port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = int(probe.getsockname()[1])
        self.port = port
        self.uri = f"http://127.0.0.1:{self.port}/callback"
        self._listener: Any = None

    async def send_browser(self, url: str) -> None:
        bound = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self._listener = bound.listeners[0]  # one loopback address: one socket
        print(f"MCP server {self.server} asks you to sign in: {url}", file=sys.stderr, flush=True)
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    async def wait_code(self) -> AuthorizationCodeResult:
        if self._listener is None:
            raise RuntimeError("the browser was not sent to sign in")
        try:
            with anyio.fail_after(SIGN_IN_TIMEOUT):
                while True:
                    stream = await self._listener.accept()
                    async with stream:
                        line = (await stream.receive(65536)).split(b"\r\n", 1)[0].decode("latin-1")
                        query = parse_qs(urlsplit(line.split(" ")[1]).query) if " " in line else {}
                        await stream.send(
                            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                            + f"Content-Length: {len(_PAGE)}\r\n\r\n".encode()
                            + _PAGE
                        )
                    if "error" in query:
                        raise RuntimeError(f"sign-in refused: {query['error'][0]}")
                    if "code" in query:
                        state = query.get("state", [None])[0]
                        return AuthorizationCodeResult(code=query["code"][0], state=state)
        except TimeoutError:
            raise RuntimeError(f"sign-in did not finish within {SIGN_IN_TIMEOUT:g} s") from None
        finally:
            await self._listener.aclose()
            self._listener = None


def provider(config: ServerConfig, auth_dir: Path) -> OAuthClientProvider:
    """The SDK's OAuth flow for one HTTP server, its tokens kept under `auth_dir`."""
    assert config.url is not None
    tokens = FileTokens(auth_dir / f"{config.name}.json")
    redirect = _Redirect(config.name, tokens.registered_port())
    metadata = OAuthClientMetadata(
        client_name="yagent",
        redirect_uris=[redirect.uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=config.url,
        client_metadata=metadata,
        storage=tokens,
        redirect_handler=redirect.send_browser,
        callback_handler=redirect.wait_code,
    )
