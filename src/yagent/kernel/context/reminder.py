"""reminder: a band around system-injected text that untrusted text cannot imitate.

Guarantees:
- `wrap(text, kind=...)` puts system text in a band carrying the current marker: the one set by
  `using(marker)` for the code running inside it (a host gives each session its own, drawn with
  `new_marker()`), else a per-process marker drawn from `secrets` at import time — unpredictable
  to anything outside the process either way. `unwrap` / `is_trusted` accept exactly such a band
  under the current marker and return / confirm its text. `reseal(text)` moves bands this process
  made before a session's marker was in force under that marker (nothing else is touched).
- `neutralize(untrusted)` rewrites everything in untrusted text (tool output, files, web pages)
  that imitates a band tag of any registered kind, or a chat-template control token, into a
  visible `[neutralized ...]` note, so a forged reminder reads as data. Imitations are found on a
  skeleton of the text: compatibility-normalized (NFKD: fullwidth `＜`, math letters, ...),
  without zero-width and format characters (U+200B..U+200D, U+2060, U+FEFF, ...) or combining
  marks, case-folded, with look-alike letters and brackets mapped to ASCII and `&lt;`-style
  escapes decoded. Unicode tag characters (U+E0000–U+E007F: drawn as nothing, yet read by
  models as the ASCII letters they shadow — a sentence only the model sees) are written out as
  their escapes (`\\U000e0069`). Only the matched spans and those are rewritten: everything
  else, including ordinary `<` in code and zero-width joiners in emoji, comes back byte for byte.
  Genuine bands found in untrusted text are neutralized too (a marker can leak; a band's trust
  comes from where it was placed, never from its content). `neutralize` is idempotent.
Refuses: kinds that are not lower-case identifiers.
Leaves to the host: calling `neutralize` on every untrusted text before it reaches the model and
`wrap` on every system injection; one marker per session (`using`), shown to nobody but the model;
telling the model how genuine bands look. Known limit: `<s>` /
`</s>` are not treated as control tokens (they are ordinary HTML).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import secrets
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

DEFAULT_KIND = "system-reminder"

_MARKER = secrets.token_hex(16)  # the process's own, for bands made outside any session
_current: contextvars.ContextVar[str] = contextvars.ContextVar("reminder_marker", default=_MARKER)
_MARKER_SHAPE = re.compile(r"[0-9a-f]{32}")
_KIND_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
_kinds_lock = threading.Lock()
_kinds: frozenset[str] = frozenset({DEFAULT_KIND})
_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]")


class ReminderError(ValueError):
    """Root of this module's errors (a bad kind name)."""


def marker() -> str:
    """The band marker in force here (for telling the model what a genuine band carries)."""
    return _current.get()


def new_marker() -> str:
    """A fresh marker (one per session), as unpredictable as the process's own."""
    return secrets.token_hex(16)


@contextlib.contextmanager
def using(value: str) -> Iterator[None]:
    """Bands made and checked inside this block (and tasks started in it) carry `value`."""
    if not (isinstance(value, str) and _MARKER_SHAPE.fullmatch(value)):
        raise ReminderError("reminder: a marker is 32 lower-case hex digits (see new_marker)")
    token = _current.set(value)
    try:
        yield
    finally:
        _current.reset(token)


def reseal(text: str) -> str:
    """`text` with the bands this process made outside any session moved under the current
    marker (a continuation written before its session's marker was in force)."""
    current = _current.get()
    if current == _MARKER:
        return text
    return text.replace(f'band="{_MARKER}">', f'band="{current}">')


def _check_kind(kind: str) -> str:
    if not (isinstance(kind, str) and len(kind) <= 64 and _KIND_SHAPE.fullmatch(kind)):
        raise ReminderError(f"reminder: kind must be a lower-case identifier, got {kind!r}")
    return kind


def register_kind(kind: str) -> None:
    """Make `neutralize` treat imitations of `kind` bands as forgeries (`wrap` does this too)."""
    global _kinds
    _check_kind(kind)
    with _kinds_lock:
        _kinds = _kinds | {kind}


def kinds() -> frozenset[str]:
    return _kinds


def wrap(text: str, *, kind: str = DEFAULT_KIND) -> str:
    """System-injected `text` in a band the model can trust. `text` itself is trusted as is."""
    register_kind(kind)
    band = _current.get()
    return f'<{kind} band="{band}">\n{text}\n</{kind} band="{band}">'


_BAND = re.compile(r'<([a-z0-9_-]+) band="([0-9a-f]+)">\n(.*)\n</\1 band="\2">', re.DOTALL)


def unwrap(band: str) -> str | None:
    """The text of a genuine band (exactly what `wrap` produced), else None."""
    match = _BAND.fullmatch(band) if isinstance(band, str) else None
    if match is None or not _KIND_SHAPE.fullmatch(match.group(1)):
        return None
    if not secrets.compare_digest(match.group(2), _current.get()):
        return None
    return match.group(3)


def is_trusted(band: str) -> bool:
    return unwrap(band) is not None


# --- the skeleton: what a reader would take each character for ---------------------------------

# Look-alikes NFKD does not fold, mapped to what they imitate (both cases; folded afterwards).
_LOOKALIKE = str.maketrans(
    {
        **dict.fromkeys("‹〈〈⟨˂ᐸ❮", "<"),
        **dict.fromkeys("›〉〉⟩˃ᐳ❯", ">"),
        **dict.fromkeys("∕⁄⧸╱", "/"),
        **dict.fromkeys("ǀ∣│❘￨⏐", "|"),
        **dict.fromkeys("‐‑‒–—―−⁃", "-"),
        **dict.fromkeys("▁‗ˍ", "_"),
        **dict.fromkeys("⟦", "["),
        **dict.fromkeys("⟧", "]"),
        **dict.fromkeys("аАɑαΑ", "a"),
        **dict.fromkeys("вВΒʙ", "b"),
        **dict.fromkeys("сСϲ", "c"),
        **dict.fromkeys("ԁᴅᎠ", "d"),
        **dict.fromkeys("еЕεΕᴇᎬ", "e"),
        **dict.fromkeys("ɡ", "g"),
        **dict.fromkeys("һнНΗʜ", "h"),
        **dict.fromkeys("іІıιΙɪӀӏ", "i"),
        **dict.fromkeys("јЈȷ", "j"),
        **dict.fromkeys("кКκΚᴋ", "k"),
        **dict.fromkeys("ʟ", "l"),
        **dict.fromkeys("мМΜᴍᎷ", "m"),
        **dict.fromkeys("ΝɴηпП", "n"),
        **dict.fromkeys("оОοΟօᴏ", "o"),
        **dict.fromkeys("рРρΡᴘ", "p"),
        **dict.fromkeys("ԛ", "q"),
        **dict.fromkeys("гʀᎡ", "r"),
        **dict.fromkeys("ѕЅꜱᏚ", "s"),
        **dict.fromkeys("тТτΤᴛᎢ", "t"),
        **dict.fromkeys("υսᴜ", "u"),
        **dict.fromkeys("νѵᴠ", "v"),
        **dict.fromkeys("ԝωᴡᎳ", "w"),
        **dict.fromkeys("хХχΧ", "x"),
        **dict.fromkeys("уУүҮΥʏγ", "y"),
        **dict.fromkeys("ΖᴢᏃ", "z"),
    }
)

_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf"})

# Escaped angle brackets and pipes a reader (or a later decoding step) would turn into real ones.
_ESCAPE = re.compile(
    r"(?P<lt>&(?:lt|#0*60|#x0*3c);|\\u003c|\\x3c|%3c)"
    r"|(?P<gt>&(?:gt|#0*62|#x0*3e);|\\u003e|\\x3e|%3e)"
    r"|(?P<vert>&(?:vert|verbar|#0*124|#x0*7c);|\\u007c|\\x7c|%7c)",
    re.IGNORECASE,
)
_ESCAPED = {"lt": "<", "gt": ">", "vert": "|"}


@functools.lru_cache(maxsize=8192)
def _skeleton_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", ch)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in _DROPPED_CATEGORIES)
    return kept.translate(_LOOKALIKE).casefold().translate(_LOOKALIKE)


def _skeleton(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """The skeleton, and for each of its characters the original span (None: one to one)."""
    if text.isascii() and not _ESCAPE.search(text):
        return text.lower(), None, None
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    index = 0
    while index < len(text):
        escape = _ESCAPE.match(text, index)
        if escape is not None:
            piece, end = _ESCAPED[escape.lastgroup or ""], escape.end()
        else:
            piece, end = _skeleton_char(text[index]), index + 1
        for c in piece:
            chars.append(c)
            starts.append(index)
            ends.append(end)
        index = end
    return "".join(chars), starts, ends


# --- what counts as an imitation ---------------------------------------------------------------

_JOIN = r"[^a-z0-9<>|\[\]]{0,8}"  # separators a forger may slip between the letters of a name
_CONTROL_NAMES = (
    "im_start", "im_end", "im_sep", "endoftext", "eot_id", "eom_id", "start_header_id",
    "end_header_id", "begin_of_text", "end_of_text", "system", "user", "assistant", "end",
)  # fmt: skip
_BRACKET_NAMES = (
    "inst", "system_prompt", "available_tools", "tool_calls", "tool_results", "tool_content",
)  # fmt: skip
_BARE_NAMES = ("start_of_turn", "end_of_turn", "im_start", "im_end", "endoftext", "eot_id")


def _flex(name: str) -> str:
    letters = [c for c in name if c.isalnum()]
    return _JOIN.join(re.escape(c) for c in letters)


def _alternatives(names: Iterable[str]) -> str:
    return "|".join(_flex(n) for n in sorted(names, key=len, reverse=True))


_TOKEN = (
    rf"<\s*\|\s*(?:{_alternatives(_CONTROL_NAMES)})\s*\|\s*>"
    r"|<\|[a-z][a-z0-9_.\-]{0,48}\|>"
    rf"|(?<![a-z0-9_\])])\[\s*/?\s*(?:{_alternatives(_BRACKET_NAMES)})\s*\]"
    r"|<\s*<\s*/?\s*sys\s*>\s*>"
    rf"|<\s*/?\s*(?:{_alternatives(_BARE_NAMES)})\s*>"
)


@functools.lru_cache(maxsize=64)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    bands = "|".join(
        rf"(?P<k{i}><\s*/?\s*{_flex(n)}(?![a-z0-9])(?:[^<>\n]{{0,200}}>)?)"
        for i, n in enumerate(names)
    )
    return re.compile(f"{bands}|(?P<token>{_TOKEN})")


@dataclass(frozen=True, slots=True)
class Finding:
    """One imitation in untrusted text: its span in the original and what it imitates."""

    start: int
    end: int
    label: str


def findings(untrusted: str, *, extra_kinds: Iterable[str] = ()) -> tuple[Finding, ...]:
    """Every band-tag or control-token imitation in `untrusted`, in order, not overlapping."""
    names = tuple(sorted(_kinds | {_check_kind(k) for k in extra_kinds}, key=len, reverse=True))
    skeleton, starts, ends = _skeleton(untrusted)
    found: list[Finding] = []
    for match in _pattern(names).finditer(skeleton):
        first, last = match.start(), match.end() - 1
        start = first if starts is None else starts[first]
        end = last + 1 if ends is None else ends[last]
        group = match.lastgroup or ""
        if group == "token":
            label = "control token: " + re.sub(r"[^a-z0-9_/]", "", match.group())
        else:
            closing = "/" if re.match(r"<\s*/", match.group()) else ""
            label = f"forged tag: {closing}{names[int(group[1:])]}"
        found.append(Finding(start, end, label))
    return tuple(found)


def neutralize(untrusted: str, *, extra_kinds: Iterable[str] = ()) -> str:
    """`untrusted` with every imitation rewritten as a visible note; everything else unchanged."""
    extra = tuple(extra_kinds)
    text = untrusted
    # Rewriting can, in principle, join two fragments into a new imitation: repeat to a fixpoint.
    while found := findings(text, extra_kinds=extra):
        parts: list[str] = []
        cursor = 0
        for f in found:
            parts.append(text[cursor : f.start])
            parts.append(f"[neutralized {f.label}]")
            cursor = f.end
        parts.append(text[cursor:])
        text = "".join(parts)
    if _TAG_CHARACTERS.search(text) is None:
        return text
    return _TAG_CHARACTERS.sub(lambda m: f"\\U{ord(m.group()):08x}", text)
