"""Benchmark: how fast a stale element ref fails, against the action timeout it used to wait out.

Figures (one JSON line each, median of `RUNS`, real headless Chromium on a loopback page):
- browser_stale_ref_ratio_to_timeout: the time of a `browser_click` with a ref from the snapshot
  of a page the tab has left (it must fail at once, asking for a new snapshot) over the action
  timeout (`BrowserConfig.timeout`) it used to wait out; bound: `BOUND_RATIO`;
- browser_stale_ref_wrong_outcomes: stale clicks that did not fail as `not_found` (bound 0);
- browser_fresh_ref_ms: `browser_click` with a ref of the current snapshot (the peer: what a
  working click costs, so the stale check is seen to cost about one round trip).
Exits 1 when the bound is missed or a stale click does not fail as `not_found`.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import anyio

from benchlib import Report
from yagent.kernel.confine.netguard import Allow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.hostservices import BrowserConfig, close_browser, configure_browser
from yagent.tools.registry import executors
from yagent.tools.settings import Settings
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

RUNS = 5
ACTION_TIMEOUT = 15.0
BOUND_RATIO = 0.2
PAGES = {
    "/": b"<title>A</title><button onclick=\"this.textContent='x'\">Go</button>",
    "/b": b"<title>B</title><p>elsewhere</p>",
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = PAGES.get(self.path, b"missing")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def context(root: Path) -> ToolContext:
    (root / "ws").mkdir()
    (root / "home").mkdir()
    guard = WorkspaceGuard(root / "ws", settings=Settings(root / "home"))
    surface = Surface(BUILTIN, profile("browser"), guard, options=SurfaceOptions(deferred=False))
    ctx = ToolContext(root / "ws", surface, state_dir=root / "state")
    configure_browser(ctx, BrowserConfig(allow=Allow(loopback=True), timeout=ACTION_TIMEOUT))
    return ctx


async def call(adapter: Adapter, name: str, args: dict[str, str]) -> tuple[bool, dict[str, str]]:
    result = await adapter.call(name, json.dumps(args), "b")
    data = json.loads(result.content)
    data["kind"] = str(result.kind)
    return result.ok, data


async def ref(adapter: Adapter) -> str:
    _, snap = await call(adapter, "browser_snapshot", {})
    line = next(ln for ln in snap["snapshot"].splitlines() if "button" in ln)
    return line.split("[ref=")[1].split("]")[0]


async def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    ctx = context(Path(tempfile.mkdtemp(prefix="bench-browser-")))
    adapter = Adapter(ctx, executors())
    stale: list[float] = []
    fresh: list[float] = []
    failed = 0
    try:
        for _ in range(RUNS):
            await call(adapter, "browser_navigate", {"url": base + "/"})
            old = await ref(adapter)
            start = time.perf_counter()
            await call(adapter, "browser_click", {"ref": old})
            fresh.append(time.perf_counter() - start)
            await call(adapter, "browser_navigate", {"url": base + "/b"})
            start = time.perf_counter()
            ok, said = await call(adapter, "browser_click", {"ref": old})
            stale.append(time.perf_counter() - start)
            failed += ok or said["kind"] != "not_found"
    finally:
        await close_browser(ctx)
        server.shutdown()
    stale_ms, fresh_ms = statistics.median(stale) * 1000, statistics.median(fresh) * 1000
    bench = Report()
    bench.figure(
        "browser_stale_ref_ratio_to_timeout",
        round(stale_ms / (ACTION_TIMEOUT * 1000), 4),
        "ratio",
        bound=BOUND_RATIO,
        stale_ms=round(stale_ms, 1),
        timeout_s=ACTION_TIMEOUT,
        ratio_to_fresh_click=round(stale_ms / fresh_ms, 3),
        runs=RUNS,
    )
    bench.figure("browser_stale_ref_wrong_outcomes", failed, "runs", bound=0)
    bench.figure("browser_fresh_ref_ms", round(fresh_ms, 1), "ms", runs=RUNS)
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
