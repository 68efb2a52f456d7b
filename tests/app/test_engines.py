"""`app.engines.ollama_models`: a local Ollama server's models, asked over plain HTTP without
loading a CA bundle (`llm.tls`)."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.llm.wire import refused_url
from yagent.app.engines import ollama_models


@pytest.fixture
def ollama() -> Iterator[str]:
    """A loopback server answering `/api/tags` as Ollama does."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"models": [{"name": "qwen3:8b"}, {"name": ""}, "x"]}).encode()
            self.send_response(200 if self.path == "/api/tags" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.anyio
async def test_a_local_server_s_models_are_read_without_a_ca_bundle(
    ollama: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loaded.append(args or kwargs)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    assert await ollama_models(ollama) == ["qwen3:8b"]
    assert loaded == []


@pytest.mark.anyio
async def test_nothing_listening_is_none() -> None:
    assert await ollama_models(refused_url(), wait=1.0) is None
