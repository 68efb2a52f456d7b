"""browser.refusals: which of the proxy's refusals were requests the pages made.

Contract:
- The proxy refuses the browser's own background requests (update checks, sign-in, autofill) and
  the pages' requests alike; only the latter are the model's business, so only they are reported.
- `record` remembers the last `KEPT` refusals by the URL the proxy judged (for a CONNECT tunnel:
  `https://host:port/`, see `tunnel_key`) and counts every one in `total`.
- `attribute(url)` is called when a page's request failed, got a 403, or its WebSocket closed;
  a refusal recorded for that URL (or its tunnel) joins the report. `take` hands the report over
  once. A refusal that no page request matches stays out of the report, but never out of `total`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from yagent.tools.browser.proxy import Refusal

KEPT = 500


def tunnel_key(url: str) -> str:
    """How the proxy names a CONNECT tunnel to `url`'s origin (https, wss, ws go through one)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port or (80 if parts.scheme in ("http", "ws") else 443)
    except ValueError:
        return ""
    return f"https://{host}:{port}/"


class RefusalLog:
    def __init__(self) -> None:
        self._by_url: dict[str, Refusal] = {}
        self._report: list[dict[str, str]] = []
        self.total = 0

    def record(self, refusal: Refusal) -> None:
        self.total += 1
        self._by_url.pop(refusal.url, None)  # re-inserted as the newest
        self._by_url[refusal.url] = refusal
        while len(self._by_url) > KEPT:
            del self._by_url[next(iter(self._by_url))]

    def remembered(self) -> list[str]:
        return list(self._by_url)

    def attribute(self, url: str) -> None:
        refusal = self._by_url.get(url) or self._by_url.get(tunnel_key(url))
        if refusal is not None:
            self._report.append({"url": url, "reason": refusal.reason, "layer": refusal.layer})

    def take(self) -> list[dict[str, str]]:
        taken = list(self._report)
        self._report.clear()
        return taken
