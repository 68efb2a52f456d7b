"""toolname: one truth for "tool name → identifier usable inside a program".

Contract:
- `is_js_ident(name)` says whether `name` can be used as it is as a JavaScript identifier (ASCII
  letters, digits, `_`, `$`; not starting with a digit; not a reserved word).
- `normalize(name)` returns the identifier to use instead: every other character (`-`, `.`,
  spaces, non-ASCII…) becomes `_`, a leading digit gets a `_` prefix, a reserved word a `_` suffix,
  an empty name becomes `_`. A name that is already an identifier is returned unchanged.
- Normalisation is NOT unique (`get-logs` and `get_logs` both give `get_logs`); deciding whether a
  collision matters is the caller's job (`collisions()` finds them).
Both the side that derives call forms (tooldisclose) and the side that binds them (ptc) use this
module, so a name one side produces is always one the other recognises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

RESERVED: frozenset[str] = frozenset(
    {
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "let",
        "static",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "await",
        "arguments",
        "eval",
        "undefined",
        "NaN",
        "Infinity",
    }
)

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_INVALID = re.compile(r"[^A-Za-z0-9_$]")


def is_js_ident(name: str) -> bool:
    """True when `name` can be used verbatim as a JavaScript identifier."""
    return bool(_IDENT.fullmatch(name)) and name not in RESERVED


def normalize(name: str) -> str:
    """The identifier to use for `name` (unchanged when it already is one)."""
    if is_js_ident(name):
        return name
    out = _INVALID.sub("_", name) or "_"
    if out[0].isdigit():
        out = "_" + out
    if out in RESERVED:
        out += "_"
    return out


def collisions(names: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
    """Normalised names shared by more than one distinct input name, with those names (sorted)."""
    groups: dict[str, set[str]] = {}
    for name in names:
        groups.setdefault(normalize(name), set()).add(name)
    return {ident: tuple(sorted(src)) for ident, src in sorted(groups.items()) if len(src) > 1}
