"""browser.failures: how the browser's failures read to the model — one place for the texts.

Guarantees: `failure(exc, refusals)` classifies a Playwright error (a network-guard refusal that
made a load fail is PERMISSION, a timeout TIMEOUT, a gone tab TRANSIENT, the rest INVALID_ARGS)
and keeps only the message's first part, cut at `MESSAGE_CHARS`; `crashed` / `tab_crashed` say
that the browser or a tab died and what was lost (TRANSIENT: the next call starts afresh);
`stale_ref` says an element ref is not on the page any more (NOT_FOUND: take a new snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence

from yagent.kernel.judge.toolfail import Kind, ToolFailure

MESSAGE_CHARS = 2_000  # one console message, and one failure message, at most


def clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [cut, {len(text)} chars]"


def is_playwright(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("playwright.")


def failure(exc: BaseException, refusals: list[dict[str, str]]) -> ToolFailure:
    """A Playwright error as the model should read it: the kind, and the message's first part."""
    message = clip(str(exc).split("\nCall log:", 1)[0].strip())
    if refusals:
        urls = ", ".join(r["url"] for r in refusals)
        if "net::ERR_" in message:  # the load itself failed because the guard refused it
            return ToolFailure(Kind.PERMISSION, f"the network guard refused {urls}: {message}")
        message += f" (meanwhile the network guard refused: {urls})"
    if "Timeout" in type(exc).__name__:
        return ToolFailure(Kind.TIMEOUT, message)
    if "has been closed" in message:
        return ToolFailure(
            Kind.TRANSIENT, f"{message} (the browser or tab is gone; the next call starts afresh)"
        )
    return ToolFailure(Kind.INVALID_ARGS, message)


def crashed(lost: Sequence[str]) -> ToolFailure:
    shown = ", ".join(u for u in lost if u != "about:blank") or "no page"
    return ToolFailure(
        Kind.TRANSIENT,
        f"the browser crashed or was killed (it was showing {shown}); its tabs, page state and "
        "logins are gone. Your next browser call starts a fresh browser: navigate again.",
    )


def tab_crashed(url: str) -> ToolFailure:
    return ToolFailure(
        Kind.TRANSIENT,
        f"the tab showing {url} crashed and was closed; navigate again (a page that crashes "
        "every time is too heavy or broken)",
    )


def stale_ref(ref: str, url: str) -> ToolFailure:
    return ToolFailure(
        Kind.NOT_FOUND,
        f"element ref {ref!r} is not on the page ({url}) any more: the page changed since the "
        "snapshot it came from. Take a new snapshot (browser_snapshot) and use its refs.",
    )
