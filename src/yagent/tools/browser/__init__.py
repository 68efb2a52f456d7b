"""yagent.tools.browser: the `browser_*` executors, driving Debian's Chromium through Playwright.

Contract:
- One browser session per tool context (`session_for`), started lazily by the first browser tool;
  `browser_close` closes it, and the host calls `tools.hostservices.close_browser(ctx)` when the run
  owning the context ends. The specs declare every browser tool serial: they share one page and one
  CDP connection, so the scheduler never runs two at once.
- The Chromium process is started from an argv list built in `session.chromium_args`, never via
  a shell; no string from the model becomes an argument.
- Every request the browser makes — navigation, redirect hop, subresource, popup, WebSocket —
  goes through the session's netguard proxy with the host's `Allow` (strict by default;
  `tools.hostservices.configure_browser(ctx, BrowserConfig(allow=...))`).
- Screenshots are written inside the session directory (`ctx.state_dir / "browser"`) whatever
  path the model gives; the result says where.
The tool names meet these functions only in `yagent.tools.registry`.
"""

from yagent.tools.browser.interact import (
    back,
    click,
    hover,
    navigate,
    press_key,
    select,
    type_text,
    wait_for,
)
from yagent.tools.browser.observe import close, console, evaluate, screenshot, snapshot, tabs
from yagent.tools.browser.session import BrowserSession, chromium_args, session_for

__all__ = [
    "BrowserSession",
    "back",
    "chromium_args",
    "click",
    "close",
    "console",
    "evaluate",
    "hover",
    "navigate",
    "press_key",
    "screenshot",
    "select",
    "session_for",
    "snapshot",
    "tabs",
    "type_text",
    "wait_for",
]
