"""pii folding: compatibility-normalised text (NFKC) with a map back to the original offsets.

Guarantees:
- `fold(text)` returns the text with every character replaced by its own NFKC form (fullwidth
  digits, letters, `＠`, `．`, `＋` and the ideographic space become their ASCII forms) and, for
  every character of the folded text, the index of the original character it came from. A
  character that folds to several (`㍿`) maps each of them to itself; one that folds to nothing
  is simply absent. `span(start, end)` maps a folded [start, end) back to the smallest original
  span covering it, so masking the original span never leaves half a character.
- Text that is already NFKC-normal is returned as is with the identity map (the common case costs
  one `unicodedata.is_normalized` check). Otherwise it is judged in chunks of `CHUNK` characters,
  a normal chunk kept whole; the map back is held by segments (`Origins`), one per character
  folding to nothing or to several: memory is a small multiple of the text, never a Python
  object per character (10 MB of binary output decoded with replacements held about 600 MB).
Characters are folded one at a time: composition across characters (`e` + combining accent) is
not performed, so offsets stay exact.
"""

from __future__ import annotations

import array
import bisect
import functools
import unicodedata
from dataclasses import dataclass

CHUNK = 1024
"""Characters judged at once: a chunk already NFKC-normal is kept whole (no per-character work)."""


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch)


@dataclass(frozen=True, slots=True, eq=False)
class Origins:
    """The map back, by segments: segment k starts at folded index `starts[k]`, which came from
    original index `origins[k]`; in a `spread` segment (one character folded to several) every
    folded character came from that one original, in the others they follow it one to one. Only
    a character that folds to nothing or to several starts a segment, so the map's size follows
    the number of those, not the text's length."""

    starts: array.array[int]
    origins: array.array[int]
    spread: bytearray

    def at(self, index: int) -> int:
        k = bisect.bisect_right(self.starts, index) - 1
        if self.spread[k]:
            return self.origins[k]
        return self.origins[k] + index - self.starts[k]


class _Builder:
    """The folded text in pieces (one per chunk) and its segments, built in one pass."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length = 0  # folded characters so far
        self.starts = array.array("q")
        self.origins = array.array("q")
        self.spread = bytearray()

    def _follows(self, index: int) -> bool:
        """Does original `index` continue the last segment one to one?"""
        return (
            bool(self.starts)
            and not self.spread[-1]
            and (self.origins[-1] + self.length - self.starts[-1] == index)
        )

    def same(self, text: str, index: int) -> None:
        """`text`, from original `index` on, folds to itself."""
        if not text:
            return
        if not self._follows(index):
            self._segment(index, spread=False)
        self.pieces.append(text)
        self.length += len(text)

    def _segment(self, index: int, *, spread: bool) -> None:
        self.starts.append(self.length)
        self.origins.append(index)
        self.spread.append(spread)  # a bool is 0 or 1

    def chunk(self, text: str, index: int) -> None:
        """`text` (from original `index` on) folded one character at a time."""
        run = 0  # start of the run of characters (within `text`) folding one to one
        out: list[str] = []
        for i, ch in enumerate(text):
            folded = _fold_char(ch)
            if len(folded) == 1:
                out.append(folded)
                continue
            self.same("".join(out), index + run)
            out = []
            if folded:
                self._segment(index + i, spread=True)
                self.pieces.append(folded)
                self.length += len(folded)
            run = i + 1
        self.same("".join(out), index + run)


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded text and, when it differs from the original, where each character came from."""

    text: str
    origin: Origins | None  # None: identity (the original was already normal)
    original_length: int

    def at(self, index: int) -> int:
        """The original index of folded character `index` (the end maps to the original end)."""
        if self.origin is None:
            return index
        return self.origin.at(index) if index < len(self.text) else self.original_length

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) covering folded [start, end) (end > start)."""
        if self.origin is None:
            return start, end
        return self.at(start), self.at(end - 1) + 1


def fold(text: str) -> Folded:
    """`text` folded per character to NFKC, with the map back (see module contract)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return Folded(text, None, len(text))
    built = _Builder()
    for at in range(0, len(text), CHUNK):
        part = text[at : at + CHUNK]
        if unicodedata.is_normalized("NFKC", part):
            built.same(part, at)
        else:
            built.chunk(part, at)
    origins = Origins(built.starts, built.origins, built.spread)
    return Folded("".join(built.pieces), origins, len(text))
