"""browser.session: one Chromium per tool context, driven through Playwright.

Contract:
- One `BrowserSession` per `ToolContext` (`session_for`, kept under
  `hostservices.BROWSER_SESSION_KEY`), started lazily by the first browser tool and closed by
  `close()`: the `browser_close` tool calls it, and the host calls `hostservices.close_browser(ctx)`
  when the run that owns the context ends (app shutdown). Closing is
  idempotent; a closed session starts a fresh browser on its next use. A browser that died
  behind the session's back (crash, kill) is never replaced silently: the next browser call
  fails (TRANSIENT) saying so and naming the pages that were lost, and the call after it starts
  a fresh browser. A crashed tab (renderer) is closed and reported the same way.
- The browser is Debian's Chromium (`BrowserConfig.executable`), launched by Playwright from the
  argument list `chromium_args` builds here: no shell, no model-provided string in the argv.
  Playwright never downloads a browser. Each start gets a fresh profile (`--user-data-dir`) under
  the session directory, deleted on close; a session directory `session_for` made itself (a
  context without a `state_dir`) is deleted on close too. Service workers are blocked and
  downloads refused.
- Every request leaves through the session's `GuardedProxy`, judged by netguard with the host's
  `Allow` (strict unless the host configures one): navigation, redirects, subresources, popups,
  WebSockets. `check_url` judges a URL before a navigation so a refusal is a clean failure;
  `take_refusals` hands the tools the pages' requests the proxy refused since the last call
  (`refusals.RefusalLog`); the browser's own background requests are refused the same way but
  only counted (`proxy_refused`), since no action of the model made them.
- Tabs are kept in opening order with one current tab; popups are adopted (listed, not
  selected). Console messages and page errors of every tab are kept up to `console_limit`;
  `console_dropped` counts what fell off the front.
Leaves to the host: the `Allow` and executable (`hostservices.configure_browser`: a
`BrowserConfig`), and calling `hostservices.close_browser`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from yagent.kernel.confine import netguard
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.browser.failures import clip, crashed, failure, is_playwright, tab_crashed
from yagent.tools.browser.proxy import GuardedProxy
from yagent.tools.browser.refusals import RefusalLog
from yagent.tools.hostservices import BROWSER_CONFIG_KEY, BROWSER_SESSION_KEY, BrowserConfig
from yagent.tools.localnet import refusal

if TYPE_CHECKING:
    from playwright.async_api import (
        BrowserContext,
        ConsoleMessage,
        Page,
        Playwright,
        Request,
        Response,
        WebSocket,
    )
# --no-sandbox: Chromium refuses to start as root with its sandbox, and CI runs as root.
BASE_FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # WebRTC may send UDP around an HTTP proxy; only proxied traffic is judged.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    # Less of the browser's own background traffic (it still meets the proxy like any other).
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--disable-features=AutofillServerCommunication,OptimizationHints,MediaRouter,Translate",
)


def chromium_args(proxy_port: int) -> list[str]:
    """Chromium's arguments: the fixed flags, and every scheme (loopback too) via the proxy."""
    return [
        *BASE_FLAGS,
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
    ]


class BrowserSession:
    def __init__(
        self, root: Path, config: BrowserConfig | None = None, *, owns_root: bool = False
    ) -> None:
        self.root = root
        self._owns_root = owns_root  # a temporary directory made for it: removed on close
        self.config = config or BrowserConfig()
        self._guard = netguard.Guard(self.config.resolver)
        self._lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._context: BrowserContext | None = None
        self._proxy: GuardedProxy | None = None
        self._profile: Path | None = None
        self._dead = False
        self._tab_crashes: set[Page] = set()
        self._shown: list[Page] = []  # tabs not closed by a tool: named if the browser dies
        self._pages: list[Page] = []
        self._current = 0
        self.refusals = RefusalLog()
        self.console: deque[dict[str, Any]] = deque(maxlen=self.config.console_limit)
        self.console_dropped = 0
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._context is not None and not self._dead

    # -- lifecycle -------------------------------------------------------------------------
    async def page(self) -> Page:
        """The current tab, starting the browser (or a first tab) when there is none."""
        async with self._lock:
            if self._dead:
                raise await self._crashed()
            if self._context is None:
                await self._start()
            assert self._context is not None
            if not self._pages:
                self._adopt(await self._context.new_page())
            page = self._pages[self._current]
            if page in self._tab_crashes:
                raise await self._tab_crashed(page)
            return page

    async def _crashed(self) -> ToolFailure:
        """The browser died behind the session's back: shut down what is left and say so."""
        lost = [p.url for p in self._shown]  # its tabs may be forgotten already
        await self._shutdown()
        return crashed(lost)

    async def _tab_crashed(self, page: Page) -> ToolFailure:
        self._tab_crashes.discard(page)
        url = page.url
        with contextlib.suppress(Exception):  # a crashed renderer may not answer
            await page.close()
        self._forget(page)
        if page in self._shown:
            self._shown.remove(page)
        return tab_crashed(url)

    async def _start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:  # pragma: no cover - the browser extra is installed in CI
            raise ToolFailure(
                Kind.INTERNAL, "browser tools need Playwright: pip install 'yagent[browser]'"
            ) from exc
        if not os.access(self.config.executable, os.X_OK):
            raise ToolFailure(
                Kind.INTERNAL,
                f"no Chromium at {self.config.executable} (Debian: apt-get install chromium)",
            )
        self.root.mkdir(parents=True, exist_ok=True)
        proxy = GuardedProxy(self._guard, self.config.allow, self.refusals.record)
        port = await proxy.start()
        profile = Path(tempfile.mkdtemp(prefix="profile-", dir=self.root))
        playwright = await async_playwright().start()
        try:
            context = await playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=self.config.executable,
                headless=True,
                args=chromium_args(port),
                service_workers="block",
                accept_downloads=False,
                timeout=self.config.launch_timeout * 1000,
            )
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await playwright.stop()
                await proxy.close()
            shutil.rmtree(profile, ignore_errors=True)
            if is_playwright(exc):
                raise ToolFailure(
                    Kind.INTERNAL,
                    f"Chromium ({self.config.executable}) did not start: {clip(str(exc))}",
                ) from exc
            raise
        context.set_default_timeout(self.config.timeout * 1000)
        context.set_default_navigation_timeout(self.config.navigation_timeout * 1000)
        context.on("close", lambda _: self._mark_dead(context))
        context.on("page", self._adopt)
        context.on("requestfailed", self._on_request)
        context.on("response", self._on_response)
        self._playwright, self._context, self._proxy, self._profile = (
            playwright,
            context,
            proxy,
            profile,
        )
        self._dead = False
        self.starts += 1
        for page in context.pages:
            self._adopt(page)

    def _mark_dead(self, context: BrowserContext) -> None:
        if context is self._context:  # not the one `_shutdown` is closing on purpose
            self._dead = True

    async def close(self) -> bool:
        """Close the browser, the proxy and the profile. False when nothing was running."""
        async with self._lock:
            return await self._shutdown()

    async def _shutdown(self) -> bool:
        context, playwright, proxy, profile = (
            self._context,
            self._playwright,
            self._proxy,
            self._profile,
        )
        self._context = self._playwright = self._proxy = self._profile = None
        self._pages.clear()
        self._shown.clear()
        self._tab_crashes.clear()
        self._current = 0
        was_running = context is not None and not self._dead
        self._dead = False
        with anyio.CancelScope(shield=True):
            try:
                if context is not None:
                    with contextlib.suppress(Exception):  # a crashed browser cannot say goodbye
                        await context.close()
            finally:
                if playwright is not None:
                    await playwright.stop()
                if proxy is not None:
                    await proxy.close()
                if profile is not None:
                    shutil.rmtree(profile, ignore_errors=True)
                if self._owns_root:
                    shutil.rmtree(self.root, ignore_errors=True)
        return was_running

    # -- tabs ------------------------------------------------------------------------------
    def _adopt(self, page: Page) -> None:
        if page in self._pages:
            return  # new_page() and the "page" event both hand us the same tab
        self._pages.append(page)
        self._shown.append(page)
        page.on("console", lambda msg: self._on_console(page, msg))
        page.on("pageerror", lambda err: self._record(page, "pageerror", str(err)))
        page.on("close", lambda _: self._forget(page))
        page.on("crash", lambda _: self._tab_crashes.add(page))
        page.on("websocket", self._on_websocket)

    def _forget(self, page: Page) -> None:
        if page not in self._pages:
            return
        index = self._pages.index(page)
        self._pages.remove(page)
        if index < self._current or self._current >= len(self._pages):
            self._current = max(0, self._current - 1)

    @property
    def current_index(self) -> int:
        return self._current

    @property
    def tab_count(self) -> int:
        return len(self._pages)

    async def tabs(self) -> list[dict[str, Any]]:
        return [
            {"index": i, "url": p.url, "title": await p.title(), "current": i == self._current}
            for i, p in enumerate(self._pages)
        ]

    def _tab(self, index: int) -> Page:
        if not 0 <= index < len(self._pages):
            raise ToolFailure(
                Kind.INVALID_ARGS, f"no tab {index}; open tabs are 0..{len(self._pages) - 1}"
            )
        return self._pages[index]

    async def new_tab(self) -> Page:
        await self.page()
        assert self._context is not None
        page = await self._context.new_page()
        self._adopt(page)
        self._current = self._pages.index(page)
        return page

    def select_tab(self, index: int) -> Page:
        page = self._tab(index)
        self._current = index
        return page

    async def close_tab(self, index: int) -> None:
        page = self._tab(index)
        await page.close()
        self._forget(page)
        self._shown.remove(page)

    # -- network guard ---------------------------------------------------------------------
    async def check_url(self, url: str) -> None:
        """Refuse (PERMISSION) a URL netguard would refuse, before the browser is asked."""
        try:
            await self._guard.check(url, self.config.allow)
        except netguard.BlockedError as exc:
            raise ToolFailure(Kind.PERMISSION, f"navigation refused: {refusal(exc)}") from exc

    def _on_request(self, request: Request) -> None:
        self.refusals.attribute(request.url)

    def _on_response(self, response: Response) -> None:
        if response.status == 403:  # the proxy answers a refused plain-HTTP request with 403
            self.refusals.attribute(response.url)

    def _on_websocket(self, socket: WebSocket) -> None:
        # a refused tunnel surfaces as a socket error, before the close
        socket.on("socketerror", lambda _: self.refusals.attribute(socket.url))

    def take_refusals(self) -> list[dict[str, str]]:
        """The refused requests the pages made since the last call (the browser's own are not)."""
        return self.refusals.take()

    @property
    def proxy_refused(self) -> int:
        """Every refusal, the browser's own background requests included."""
        return self.refusals.total

    @contextlib.asynccontextmanager
    async def acting(self) -> AsyncIterator[None]:
        """Translate Playwright's errors into tool failures the model can act on."""
        try:
            yield
        except Exception as exc:
            if not is_playwright(exc):
                raise
            async with self._lock:  # died during the action: the crash is the failure
                if self._dead:
                    raise await self._crashed() from exc
                crashed_tab = next((p for p in self._pages if p in self._tab_crashes), None)
                if crashed_tab is None and "Target crashed" in str(exc) and self._pages:
                    crashed_tab = self._pages[self._current]  # before its "crash" event came
                if crashed_tab is not None:
                    raise await self._tab_crashed(crashed_tab) from exc
            raise failure(exc, self.take_refusals()) from exc

    # -- console ---------------------------------------------------------------------------
    def _on_console(self, page: Page, msg: ConsoleMessage) -> None:
        self._record(page, msg.type, msg.text)

    def _record(self, page: Page, kind: str, text: str) -> None:
        if len(self.console) == self.console.maxlen:
            self.console_dropped += 1
        tab = self._pages.index(page) if page in self._pages else -1
        self.console.append({"tab": tab, "type": kind, "text": clip(text), "url": page.url})


def session_for(ctx: ToolContext) -> BrowserSession:
    """The context's browser session, created (not started) on first request."""
    session = ctx.services.get(BROWSER_SESSION_KEY)
    if isinstance(session, BrowserSession):
        return session
    config = ctx.services.get(BROWSER_CONFIG_KEY)
    if ctx.state_dir is not None:
        made = BrowserSession(ctx.state_dir / "browser", config)
    else:
        made = BrowserSession(
            Path(tempfile.mkdtemp(prefix="yagent-browser-")), config, owns_root=True
        )
    ctx.services.put(BROWSER_SESSION_KEY, made)
    return made
