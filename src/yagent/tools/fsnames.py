"""File names that are not valid UTF-8, as text that can be stored, shown and given back.

Contract: the OS hands such names over with each undecodable byte as a lone surrogate (PEP 383).
`name_text` writes each such byte as `\\xNN` and, in such a name only, doubles every backslash —
visible, storable as UTF-8 and reversible: `name_of(name_text(n)) == n` for every name. Valid
names pass through unchanged, both ways (text with no escapes is returned as it is).
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"\\(\\|x[89a-fA-F][0-9a-fA-F])")


def name_text(name: str) -> str:
    """`name` as UTF-8-safe text: undecodable bytes as `\\xNN` (see the module contract)."""
    if not any("\udc80" <= ch <= "\udcff" for ch in name):
        return name
    return "".join(
        f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else "\\\\" if ch == "\\" else ch
        for ch in name
    )


def name_of(text: str) -> str:
    """The name `name_text` spelled as `text` (text without escapes is returned as is)."""
    return _ESCAPED.sub(lambda m: "\\" if m[1] == "\\" else chr(0xDC00 + int(m[1][1:], 16)), text)
