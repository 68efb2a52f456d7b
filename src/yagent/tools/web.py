"""The `web_fetch` executor: one URL fetched through netguard, returned as readable text.

Guarantees:
- The URL is judged as the model wrote it (`netguard` screen) before any HTTP library reads it —
  httpx would make `file:///x` into `file:/x` and `data:…` into a path, and the refusal would
  name a URL nobody wrote. Then every request goes through `netguard.new_client`: the URL, every
  redirect hop and the real peer of every connection are judged (scheme, names, every resolved
  address; loopback, private, metadata… refused unless the host's `Allow` opens them — and
  metadata never). A refusal is a PERMISSION failure naming netguard's reason, the URL, and
  either how the person opens it (a loopback or private target) or that nothing does — a scheme
  other than http:// and https:// among them (`localnet.refusal`); nothing is fetched.
- Only text is read: `text/*`, JSON, XML and XHTML. Any other content type is refused with a
  message naming it (the body is not read). HTML becomes readable text (`webtext`).
- The body is read up to `MAX_BYTES` (the rest is not downloaded) and the text cut at
  `max_chars`; either cut is stated in the text and in `truncated` — never silent.
Leaves to the host: the `Allow` and resolver (`tools.hostservices.configure_web`; strict and the
system's by default; the app opens what `[network] allow_local` / `--allow-local` list,
`tools.localnet`).
"""

from __future__ import annotations

import codecs
from typing import Any

import httpx

from yagent.kernel.confine import netguard
from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.tools.hostservices import WEB_CONFIG_KEY, WebConfig
from yagent.tools.invocation import needs
from yagent.tools.localnet import refusal
from yagent.tools.webtext import html_to_text
from yagent.toolspec import params as p

MAX_BYTES = 2 * 1024 * 1024
"""Body bytes read at most (a seam); the rest of a larger body is never downloaded."""
TIMEOUT = 30.0
_TEXT_TYPES = ("application/json", "application/xml", "application/xhtml+xml")


def _config(ctx: ToolContext) -> WebConfig:
    return ctx.services.get(WEB_CONFIG_KEY) or WebConfig()


def _is_text(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return (
        media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith(("+json", "+xml"))
        or media == ""
    )


@needs(WEB_CONFIG_KEY)
async def web_fetch(ctx: ToolContext, args: p.WebFetchArgs) -> dict[str, Any]:
    config = _config(ctx)
    try:
        netguard.Guard(config.resolver).screen(args.url, config.allow)
        async with (
            netguard.new_client(config.allow, resolver=config.resolver, timeout=TIMEOUT) as client,
            client.stream("GET", args.url, headers={"Accept": "text/html, text/*;q=0.9"}) as resp,
        ):
            content_type = resp.headers.get("content-type", "")
            if not _is_text(content_type):
                raise toolfail.ToolFailure(
                    toolfail.Kind.INVALID_ARGS,
                    f"web_fetch reads text only; {resp.url} is {content_type!r} "
                    "(not fetched). Use run_bash or the browser for other content.",
                )
            body, complete = await _read(resp)
            charset = resp.charset_encoding or "utf-8"
            final_url, status = str(resp.url), resp.status_code
            hops = len(resp.history)
    except netguard.BlockedError as exc:
        raise toolfail.ToolFailure(toolfail.Kind.PERMISSION, refusal(exc)) from exc
    except httpx.TooManyRedirects as exc:
        raise toolfail.ToolFailure(
            toolfail.Kind.INVALID_ARGS, f"too many redirects: {exc}"
        ) from exc
    text = _decode(body, charset)
    title = ""
    if "html" in content_type.lower() or (not content_type and "<html" in text[:1000].lower()):
        page = html_to_text(text, final_url)
        title, text = page.title, page.text
    return _result(args, text, title, final_url, status, content_type, hops, complete, len(body))


async def _read(resp: httpx.Response) -> tuple[bytes, bool]:
    """At most MAX_BYTES of the body, and whether that was all of it."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BYTES:
            return b"".join(chunks)[:MAX_BYTES], False
    return b"".join(chunks), True


def _decode(body: bytes, charset: str) -> str:
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return body.decode(charset, errors="replace")


def _result(
    args: p.WebFetchArgs,
    text: str,
    title: str,
    url: str,
    status: int,
    content_type: str,
    hops: int,
    complete: bool,
    size: int,
) -> dict[str, Any]:
    notes: list[str] = []
    if not complete:
        notes.append(f"[body cut: read the first {MAX_BYTES} bytes; the rest was not downloaded]")
    total = len(text)
    shown = text[: args.max_chars]
    if total > args.max_chars:
        notes.append(
            f"[text truncated: showed {args.max_chars} of {total} characters; fetch a more "
            "specific URL or raise max_chars]"
        )
    head = f"HTTP {status}" + (f" · {title}" if title else "") + f" · {url}"
    body = "\n\n".join([head, shown or "(no text)", *notes])
    return {
        "url": url,
        "status": status,
        "content_type": content_type,
        "title": title,
        "redirects": hops,
        "bytes": size,
        "total_chars": total,
        "truncated": total > args.max_chars or not complete,
        "text": body,
    }
