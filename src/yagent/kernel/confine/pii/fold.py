"""pii folding: compatibility-normalised text (NFKC) with a map back to the original offsets.

Guarantees:
- `fold(text)` returns the text with every character replaced by its own NFKC form (fullwidth
  digits, letters, `＠`, `．`, `＋` and the ideographic space become their ASCII forms) and, for
  every character of the folded text, the index of the original character it came from. A
  character that folds to several (`㍿`) maps each of them to itself; one that folds to nothing
  is simply absent. `span(start, end)` maps a folded [start, end) back to the smallest original
  span covering it, so masking the original span never leaves half a character.
- Text that is already NFKC-normal is returned as is with the identity map (the common case costs
  one `unicodedata.is_normalized` check).
Characters are folded one at a time: composition across characters (`e` + combining accent) is
not performed, so offsets stay exact.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch)


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded text and, when it differs from the original, where each character came from."""

    text: str
    origin: tuple[int, ...] | None  # None: identity (the original was already normal)
    original_length: int

    def at(self, index: int) -> int:
        """The original index of folded character `index` (the end maps to the original end)."""
        if self.origin is None:
            return index
        return self.origin[index] if index < len(self.origin) else self.original_length

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) covering folded [start, end) (end > start)."""
        if self.origin is None:
            return start, end
        return self.at(start), self.at(end - 1) + 1


def fold(text: str) -> Folded:
    """`text` folded per character to NFKC, with the map back (see module contract)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return Folded(text, None, len(text))
    parts: list[str] = []
    origin: list[int] = []
    for index, ch in enumerate(text):
        folded = _fold_char(ch)
        parts.append(folded)
        origin.extend([index] * len(folded))
    return Folded("".join(parts), tuple(origin), len(text))
