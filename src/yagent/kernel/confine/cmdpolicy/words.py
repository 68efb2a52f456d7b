"""Words as bash sees them: which are static, and the text forms the grammar gets wrong.

Guarantees: `word_arg` gives a word's literal value only when bash could not change it at run
time — quotes removed and `$'…'` decoded, but no expansion of any kind, no unquoted glob, no
brace expansion, no `\\$`/`\\``/continuation inside; otherwise the value is None. `word_args`
gives the words a brace expansion makes, one `Arg` each (see `expand`). The helpers read
backtick bodies, heredoc text and the gaps between words the way bash does.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from yagent.kernel.confine.cmdpolicy import expand
from yagent.kernel.confine.cmdpolicy.errors import UnclosedQuoteError
from yagent.kernel.confine.cmdpolicy.model import Arg

if TYPE_CHECKING:
    from tree_sitter import Node

_ESCAPED_BYTES = re.compile(rb"\\.", re.DOTALL)
_UNESCAPE_BACKTICK = re.compile(r"\\([$`\\])")


def unescape_backtick(body: str) -> str:
    """bash un-escapes \\$, \\` and \\\\ inside backticks before it parses the body."""
    return _UNESCAPE_BACKTICK.sub(r"\1", body)


def unquoted(data: bytes, node: Node) -> bytes:
    """The bytes of the unquoted `word` parts of a word node (quotes may hold newlines)."""
    if node.type == "word":
        return data[node.start_byte : node.end_byte]
    if node.type == "concatenation":
        return b" ".join(unquoted(data, c) for c in node.children if c.type == "word")
    return b""


def word_arg(data: bytes, node: Node) -> Arg:
    """The word under `node`: its literal value, or None when only run time knows it (or bash
    makes several words of it)."""
    source = data[node.start_byte : node.end_byte].decode("utf-8")
    found = expand.fields(data, node)
    return Arg(found[0].static if len(found) == 1 else None, source, found)


def word_args(data: bytes, node: Node) -> list[Arg]:
    """The words bash passes for the word under `node`: one per brace-expansion field."""
    arg = word_arg(data, node)
    if len(arg.fields) == 1:
        return [arg]
    return [Arg(f.static, arg.source, (f,)) for f in arg.fields]


def as_double_quoted(text: str) -> str:
    """Heredoc text → the inside of an equivalent "…" (only `"` differs between the two)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "$`\\\n":
            out.append(text[i : i + 2])
            i += 2
            continue
        out.append({"\\": "\\\\", '"': '\\"'}.get(ch, ch))
        i += 1
    return "".join(out)


def backtick_bodies(text: str) -> list[str]:
    """The raw bodies of the unescaped backtick pairs in `text`; an unpaired one is refused."""
    if "`" not in text:
        return []
    bodies: list[str] = []
    start: int | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":
            if start is None:
                start = i + 1
            else:
                bodies.append(text[start:i])
                start = None
        i += 1
    if start is not None:
        raise UnclosedQuoteError(f"unclosed backtick in {text[:40]!r}")
    return bodies


def bare_newline(text: bytes) -> bool:
    """A newline that is neither escaped nor part of a line continuation."""
    return b"\n" in text and b"\n" in _ESCAPED_BYTES.sub(b"", text)


def heredoc_span(redirect: Node) -> tuple[int, int] | None:
    parts = [c for c in redirect.children if c.type in ("heredoc_body", "heredoc_end")]
    return (parts[0].start_byte, parts[-1].end_byte) if parts else None


def cut(data: bytes, start: int, end: int, holes: list[tuple[int, int]]) -> bytes:
    """data[start:end] without the heredoc bodies inside it (their newlines are not blanks)."""
    out = bytearray()
    at = start
    for hole_start, hole_end in sorted(holes):
        if hole_end <= at or hole_start >= end:
            continue
        out += data[at:hole_start] if hole_start > at else b""
        at = hole_end
    return bytes(out + data[at:end]) if at < end else bytes(out)


def glued(gap: bytes) -> bool:
    """Two words with only line continuations between them are one word to bash."""
    return bool(gap) and not gap.replace(b"\\\n", b"")
