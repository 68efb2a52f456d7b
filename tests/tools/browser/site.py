"""A small website on 127.0.0.1 for the browser tests: a form, a link, a button that changes text,
console output, redirects (one to the cloud metadata address), and pages whose subrequests the
network guard must refuse. Every address it names is loopback or refused before any dial."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

METADATA = "http://169.254.169.254/latest/meta-data/"

INDEX = """<!doctype html><html><head><title>Test Page</title></head><body>
<h1>Hello yagent</h1>
<p id="status">idle</p>
<button id="go" onclick="document.getElementById('status').textContent='clicked'">Change</button>
<form action="/submit" method="get">
  <label>Name <input id="name" name="name" value="start"></label>
  <select id="color" name="color"><option value="r">Red</option><option value="g">Green</option>
  </select>
  <button id="send" type="submit">Send</button>
</form>
<a id="other" href="/other">Other page</a>
<a id="popup" href="/other" target="_blank">Popup</a>
<div id="hov" onmouseover="this.textContent='hovered'">hover me</div>
<div id="later"></div>
<script>
console.log("hello from the page");
console.error("an error line");
setTimeout(() => { document.getElementById('later').textContent = 'arrived late'; }, 300);
</script>
</body></html>"""


@dataclass
class Site:
    port: int
    hits: Counter[str] = field(default_factory=Counter)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _handler(site: Site, pages: dict[str, str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(
            self, body: str, status: int = 200, headers: dict[str, str] | None = None
        ) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            site.hits[parts.path] += 1
            if parts.path == "/submit":
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                text = ";".join(f"{k}={query[k]}" for k in sorted(query))
                self._send(f"<title>Submitted</title><p id='result'>{text}</p>")
            elif parts.path == "/to-metadata":
                self._send("", 302, {"Location": METADATA})
            elif parts.path == "/to-metadata-tls":
                self._send("", 302, {"Location": "https://169.254.169.254/latest/"})
            elif parts.path == "/to-other":
                self._send("", 302, {"Location": "/other"})
            elif parts.path in pages:
                self._send(pages[parts.path])
            else:
                self._send("<title>Missing</title>not here", 404)

    return Handler


def _pages(other_port: int) -> dict[str, str]:
    big = "".join(f"<p>paragraph number {i} with some words</p>" for i in range(800))
    return {
        "/": INDEX,
        "/other": "<title>Other</title><p>the other page</p>",
        "/big": f"<title>Big</title>{big}",
        "/img-metadata": f"<title>Img</title><img src='{METADATA}x.png'><p>with image</p>",
        "/img-other-port": (
            f"<title>Cross</title><img src='http://127.0.0.1:{other_port}/pixel'><p>cross</p>"
        ),
        "/ws-metadata": (
            "<title>WS</title><script>"
            "const ws = new WebSocket('ws://169.254.169.254/socket');"
            "ws.onerror = () => document.body.append('websocket refused');"
            "</script>"
        ),
    }


@contextmanager
def serve(other_port: int = 0) -> Iterator[Site]:
    """A threaded HTTP server on 127.0.0.1; `other_port` is named by /img-other-port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    site = Site(server.server_address[1])
    server.RequestHandlerClass = _handler(site, _pages(other_port))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
