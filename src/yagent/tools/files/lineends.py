"""files.lineends: the line-ending facts of a text and the two conversions the edit tool may make.

Contract:
- `Endings.of(text)` counts CRLF pairs, bare LFs and bare CRs. A text is *uniformly CRLF* when it
  has at least one CRLF, every `\\n` is preceded by `\\r` and no `\\r` stands alone — the only case
  in which the edit tool may convert anything. A text without any line ending is not CRLF.
- `to_lf` turns CRLF pairs into `\\n` (bare CRs stay); `to_crlf` makes every `\\n` a CRLF without
  doubling existing ones. Neither touches anything else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Endings:
    crlf: int
    lf: int  # `\n` not preceded by `\r`
    cr: int  # `\r` not followed by `\n`

    @classmethod
    def of(cls, text: str) -> Endings:
        crlf = text.count("\r\n")
        return cls(crlf, text.count("\n") - crlf, text.count("\r") - crlf)

    @property
    def uniform_crlf(self) -> bool:
        return self.crlf > 0 and self.lf == 0 and self.cr == 0

    @property
    def mixed(self) -> bool:
        """More than one kind of line ending (a bare CR counts as a kind)."""
        return sum(1 for n in (self.crlf, self.lf, self.cr) if n) > 1 or self.cr > 0

    def describe(self) -> str:
        return f"{self.crlf} CRLF, {self.lf} LF, {self.cr} bare CR"


def to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def to_crlf(text: str) -> str:
    return to_lf(text).replace("\n", "\r\n")
