"""HTML → readable text for the model (stdlib `html.parser`; no rendering, no scripts).

Guarantees: the text of the document's headings, paragraphs, list items, table cells, quotes and
preformatted blocks, in document order; headings as `#` lines, list items as `- `, links as
`text (url)` with the URL resolved against the page; `<pre>` keeps its whitespace, everything else
has its whitespace collapsed. Dropped: script, style, noscript, template, svg, canvas, iframe,
nav, head (except the title, given separately), forms' controls, and comments. Character
references are decoded. Malformed markup never raises: the parser reads what it can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "canvas",
        "iframe",
        "nav",
        "head",
        "select",
        "button",
        "object",
    }
)
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "source", "wbr", "area", "col"})
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "blockquote",
        "table",
        "tr",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "figure",
        "figcaption",
        "form",
        "details",
        "summary",
        "address",
        "body",
        "html",
    }
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Page:
    title: str
    text: str


class _Reader(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.blocks: list[str] = []
        self.line: list[str] = []
        self.skip = 0
        self.pre = 0
        self.in_title = False
        self.title: list[str] = []
        self.links: list[str | None] = []
        self.prefix = ""

    def flush(self) -> None:
        text = "".join(self.line)
        self.line = []
        text = text if self.pre else _SPACE.sub(" ", text).strip()
        if text.strip():
            self.blocks.append(self.prefix + text)
        self.prefix = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip or tag in _VOID:
            if tag == "br" and not self.skip:
                self.line.append("\n" if self.pre else " ")
            return
        if tag in _HEADINGS:
            self.flush()
            self.prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "li":
            self.flush()
            self.prefix = "- "
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag in _BLOCK or tag in ("td", "th"):
            if tag in ("td", "th"):
                self.line.append(" | " if self.line else "")
            else:
                self.flush()
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(urljoin(self.base, href) if href else None)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip = max(self.skip - 1, 0)
            return
        if self.skip:
            return
        if tag == "a" and self.links:
            href = self.links.pop()
            if href and not href.startswith(("javascript:", "data:")):
                self.line.append(f" ({href})")
        elif tag == "pre":
            self.flush()
            self.pre = max(self.pre - 1, 0)
        elif tag in _HEADINGS or tag == "li" or tag in _BLOCK:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skip:
            self.line.append(data)


def html_to_text(html: str, base: str = "") -> Page:
    """The readable text of `html` (see the module contract); `base` resolves relative links."""
    reader = _Reader(base)
    reader.feed(html)
    reader.close()
    reader.flush()
    title = _SPACE.sub(" ", "".join(reader.title)).strip()
    return Page(title, "\n\n".join(reader.blocks))
