"""web_fetch against a real local HTTP server, through the real adapter and netguard."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.confine import netguard
from yagent.tools import registry, web
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.hostservices import WebConfig, configure_web

PAGE = """<!doctype html><html><head><title>The  Page</title><style>p{}</style>
<script>alert('x')</script></head><body><nav><a href="/home">Home</a></nav>
<h1>Heading</h1><p>First   paragraph with a <a href="/next">link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>  keep   this
  layout</pre><table><tr><td>a</td><td>b</td></tr></table>
<p><a href="javascript:void(0)">js</a></p><!-- hidden comment --></body></html>"""


class Handler(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, dict[str, str], bytes]]] = {}

    def do_GET(self) -> None:
        status, headers, body = self.routes.get(self.path, (404, {}, b"missing"))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    html = {"Content-Type": "text/html; charset=utf-8"}
    Handler.routes = {
        "/page": (200, html, PAGE.encode()),
        "/big": (200, {"Content-Type": "text/plain"}, b"x" * 5000),
        "/image": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n"),
        "/json": (200, {"Content-Type": "application/json"}, b'{"a": 1}'),
        "/bare": (200, {}, b"<html><title>T</title><p>bare</p></html>"),
        "/odd": (200, {"Content-Type": "text/plain; charset=klingon"}, "é".encode()),
        "/to-local": (302, {"Location": f"http://127.0.0.1:{port}/page"}, b""),
        "/to-meta": (302, {"Location": "http://169.254.169.254/latest/"}, b""),
        "/gone": (404, html, b"<p>not here</p>"),
    }
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{port}"
    httpd.shutdown()
    httpd.server_close()


class Names:
    """A resolver that answers `site.test` with loopback (as a hostile DNS answer would)."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        if host == "site.test":
            return ["127.0.0.1"]
        raise OSError(f"no such name {host}")


def adapter(workspace: Path, home: Path, config: WebConfig | None) -> Adapter:
    ctx = ToolContext(workspace, make_surface(workspace, home, profile_name="devops"))
    if config is not None:
        configure_web(ctx, config)
    return Adapter(ctx, registry.executors())


async def fetch(a: Adapter, url: str, **extra: Any) -> tuple[bool, dict[str, Any]]:
    result = await a.call("web_fetch", json.dumps({"url": url, **extra}))
    return result.ok, json.loads(result.content)


LOOPBACK = WebConfig(netguard.Allow(loopback=True))


@pytest.mark.anyio
async def test_html_becomes_readable_text(workspace: Path, home: Path, server: str) -> None:
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}/page")
    assert ok
    assert body["title"] == "The Page"
    assert body["status"] == 200
    assert not body["truncated"]
    text = body["text"]
    assert text.startswith(f"HTTP 200 · The Page · http://{server}/page")
    assert "# Heading" in text
    assert f"First paragraph with a link (http://{server}/next)." in text
    assert "- one\n\n- two" in text
    assert "  keep   this\n  layout" in text
    assert "a | b" in text
    for absent in ("alert", "Home", "p{}", "hidden comment", "javascript:"):
        assert absent not in text


@pytest.mark.anyio
async def test_long_text_is_cut_visibly(workspace: Path, home: Path, server: str) -> None:
    ok, body = await fetch(
        adapter(workspace, home, LOOPBACK), f"http://{server}/big", max_chars=300
    )
    assert ok
    assert body["truncated"]
    assert body["total_chars"] == 5000
    assert "[text truncated: showed 300 of 5000 characters" in body["text"]


@pytest.mark.anyio
async def test_a_large_body_is_not_downloaded_whole(
    workspace: Path, home: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "MAX_BYTES", 1000)
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}/big")
    assert ok
    assert body["truncated"]
    assert body["bytes"] == 1000
    assert "[body cut: read the first 1000 bytes" in body["text"]


@pytest.mark.anyio
async def test_non_text_is_refused(workspace: Path, home: Path, server: str) -> None:
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}/image")
    assert not ok
    assert "reads text only" in body["error"]
    assert "image/png" in body["error"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "needle"),
    [("/json", '{"a": 1}'), ("/bare", "bare"), ("/odd", "é"), ("/gone", "HTTP 404")],
)
async def test_other_text_shapes(
    workspace: Path, home: Path, server: str, path: str, needle: str
) -> None:
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}{path}")
    assert ok
    assert needle in body["text"]


@pytest.mark.anyio
async def test_loopback_is_refused_without_an_allowance(
    workspace: Path, home: Path, server: str
) -> None:
    ok, body = await fetch(adapter(workspace, home, None), f"http://{server}/page")
    assert not ok
    assert body["kind"] == "permission"  # a guard's refusal, never "no such tool"
    assert "netguard refused" in body["error"]
    assert "loopback" in body["error"]
    assert "--allow-local" in body["error"], "the refusal says how the person opens it"
    assert "does not exist" not in body["guidance"]


@pytest.mark.anyio
async def test_a_redirect_into_loopback_is_refused_at_the_hop(
    workspace: Path, home: Path, server: str
) -> None:
    port = server.rsplit(":", 1)[1]
    # Only the name site.test is opened (and it resolves to loopback): its own page loads…
    only_site = WebConfig(netguard.Allow(hosts=frozenset({"site.test"})), resolver=Names())
    a = adapter(workspace, home, only_site)
    ok, body = await fetch(a, f"http://site.test:{port}/page")
    assert ok, body
    # …but its redirect to 127.0.0.1 is a new hop, judged on its own, and refused.
    ok, body = await fetch(a, f"http://site.test:{port}/to-local")
    assert not ok
    assert "netguard refused" in body["error"]
    assert "127.0.0.1" in body["error"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://0xa9fea9fe/",
        "http://metadata.google.internal/",
        "file:///etc/passwd",
        "http://user@127.0.0.1@example.com/",
    ],
)
async def test_metadata_and_tricks_are_refused_even_with_everything_open(
    workspace: Path, home: Path, url: str
) -> None:
    everything = WebConfig(netguard.Allow(loopback=True, private=True))
    ok, body = await fetch(adapter(workspace, home, everything), url)
    assert not ok
    assert body["kind"] == "permission", body
    assert "--allow-local" not in body["error"], "nothing opens these: no hint that something does"


@pytest.mark.anyio
async def test_a_redirect_to_metadata_is_refused(workspace: Path, home: Path, server: str) -> None:
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}/to-meta")
    assert not ok
    assert "169.254.169.254" in body["error"]


@pytest.mark.anyio
async def test_too_many_redirects(
    workspace: Path, home: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = server.rsplit(":", 1)[1]
    Handler.routes["/loop"] = (302, {"Location": f"http://127.0.0.1:{port}/loop"}, b"")
    ok, body = await fetch(adapter(workspace, home, LOOPBACK), f"http://{server}/loop")
    assert not ok
    assert "too many redirects" in body["error"]


def test_the_tool_is_network_effect_and_warm() -> None:
    from yagent.toolspec import Effect, Tier
    from yagent.toolspec.builtin import BUILTIN

    [spec] = [s for s in BUILTIN if s.model is not None and s.model.__name__ == "WebFetchArgs"]
    assert (spec.effect, spec.tier) == (Effect.NETWORK, Tier.WARM)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("file:///etc/passwd", "file"),
        ("FILE:///etc/hosts", "file"),
        ("ftp://example.com/x", "ftp"),
        ("data:text/plain,hi", "data"),
        ("gopher://example.com/", "gopher"),
        ("view-source:http://example.com/", "view-source"),
    ],
)
async def test_other_schemes_are_refused_naming_the_url_and_the_allowed_schemes(
    workspace: Path, home: Path, url: str, scheme: str
) -> None:
    ok, body = await fetch(adapter(workspace, home, WebConfig()), url)
    assert not ok
    error = body["error"]
    assert body["kind"] == "permission", body
    assert repr(url) in error, error  # the URL the model wrote, not what a parser made of it
    assert f"scheme {scheme!r}" in error, error
    assert "http://" in error, error
    assert "https://" in error, error
    assert ("read_file" in error) == (scheme == "file"), error
    assert "--allow-local" not in error


@pytest.mark.anyio
async def test_a_relative_url_is_refused_as_one(workspace: Path, home: Path) -> None:
    ok, body = await fetch(adapter(workspace, home, WebConfig()), "/etc/passwd")
    assert not ok
    assert "'/etc/passwd'" in body["error"]
    assert "no scheme" in body["error"]
    assert "http://" in body["error"]
