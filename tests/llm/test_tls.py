"""`yagent.llm.tls`: a client context that loads its CA bundle at its first handshake, and the
OpenAI-compatible engine on an `http://` base URL, whose client uses it.

Real TLS on loopback: a certificate made by `openssl` for 127.0.0.1 (self-signed, so it is its
own CA), a `WireServer` whose listening socket speaks TLS with it, and a plain-http server that
redirects to it. `SSL_CERT_FILE` names the bundle the context trusts: that certificate (the
handshake succeeds) or another one (it must fail: the deferral never loosens verification).
"""

from __future__ import annotations

import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.llm.wire import Reply, WireServer, text_frames
from yagent.llm import tls
from yagent.llm.openai_engine import OpenAIEngine
from yagent.llm.types import EngineError, Message, Request, TurnDone

REQ = Request(system="s", messages=(Message("user", "hi"),))


def certificate(where: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate (and its key) for 127.0.0.1."""
    cert, key = where / f"{name}.pem", where / f"{name}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture
def trusted(tmp_path: Path) -> tuple[Path, Path]:
    return certificate(tmp_path, "trusted")


@pytest.fixture
def https_server(trusted: tuple[Path, Path]) -> Iterator[WireServer]:
    """A WireServer answering one streamed text reply over TLS with the `trusted` certificate."""
    server = WireServer([Reply(events=text_frames("over tls"))])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*trusted)
    server._http.socket = context.wrap_socket(server._http.socket, server_side=True)
    with server:
        yield server


class Redirector:
    """A plain-http server answering every POST with a 307 to `target` (same path)."""

    def __init__(self, target: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(307)
                self.send_header("location", target + self.path)
                self.send_header("content-length", "0")
                self.end_headers()

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        host, port = self._http.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def __enter__(self) -> Redirector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=10)


def loaded_cas(context: ssl.SSLContext) -> int:
    return context.cert_store_stats()["x509_ca"]


def https_url(server: WireServer) -> str:
    return server.url.replace("http://", "https://")


def test_a_deferred_context_verifies_as_httpx_default_and_has_loaded_nothing() -> None:
    context = tls.deferred()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert loaded_cas(context) == 0


def test_for_url_defers_only_for_plain_http() -> None:
    assert isinstance(tls.for_url("http://127.0.0.1:11434/v1"), tls.DeferredContext)
    assert isinstance(tls.for_url("HTTP://localhost/v1"), tls.DeferredContext)
    assert tls.for_url("https://api.openai.com/v1") is True


@pytest.mark.anyio
async def test_the_bundle_loads_at_the_first_handshake_and_verifies_with_it(
    https_server: WireServer, trusted: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(trusted[0]))
    context = tls.deferred()
    async with httpx.AsyncClient(verify=context) as client:
        response = await client.post(https_url(https_server) + "/v1/x", json={})
    assert response.status_code == 200
    assert loaded_cas(context) == 1  # the one certificate SSL_CERT_FILE names


@pytest.mark.anyio
async def test_a_certificate_the_bundle_does_not_hold_is_refused(
    https_server: WireServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other, _ = certificate(tmp_path, "other")
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        async with httpx.AsyncClient(verify=tls.deferred()) as client:
            await client.post(https_url(https_server) + "/v1/x", json={})


@pytest.mark.anyio
async def test_an_http_provider_redirected_to_tls_is_verified(
    https_server: WireServer,
    trusted: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's client for an `http://` base URL loaded no bundle up front; a redirect to
    `https://` loads it and verifies: refused with a bundle that lacks the server's certificate,
    answered with one that holds it."""
    other, _ = certificate(tmp_path, "other")
    with Redirector(https_url(https_server)) as redirector:
        monkeypatch.setenv("SSL_CERT_FILE", str(other))
        with pytest.raises(EngineError, match="CERTIFICATE_VERIFY_FAILED"):
            await anext(OpenAIEngine("m", base_url=redirector.url + "/v1").stream(REQ))
        monkeypatch.setenv("SSL_CERT_FILE", str(trusted[0]))
        events = [e async for e in OpenAIEngine("m", base_url=redirector.url + "/v1").stream(REQ)]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "over tls"
    assert [r.path for r in https_server.received] == ["/v1/chat/completions"]


def test_the_synchronous_client_loads_the_bundle_too(
    https_server: WireServer, trusted: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`yagent doctor` checks the provider with httpx's synchronous client (`wrap_socket`)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(trusted[0]))
    context = tls.deferred()
    response = httpx.post(https_url(https_server) + "/v1/x", json={}, verify=context)
    assert response.status_code == 200
    assert loaded_cas(context) == 1
