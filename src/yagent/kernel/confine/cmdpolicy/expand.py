"""Static expansion of one bash word: the fields bash makes of it before anything runs.

Guarantees:
- `fields(data, node)` reads a word of the AST the way bash does before it runs the command:
  quote removal (`'…'`, `"…"`, backslashes), `$'…'` ANSI-C decoding, and brace expansion
  (`{a,b}`, `{1..3}`, `{a..e..2}`, zero padding) — at most `MAX_FIELDS` fields per word.
- What only run time knows is never given a value: a field with a `$X`/`${…}`/`$1` part, a
  command substitution, `$((…))`, `<(…)` keeps its source text and names the kinds of those parts
  in `dynamic`; an unquoted `*`, `?` or `[` gives a `glob` pattern; an unquoted leading `~…`
  prefix sets `tilde`. `Field.static` is the value only when none of these hold.
- A form this reader does not expand exactly — nested braces, a sequence it does not parse, more
  fields than the cap, `$"…"`, an ANSI-C escape to a NUL or a non-ASCII character, a line
  continuation, `\\$` or a backtick the grammar left as text — is one field marked UNREAD: never
  a value, never a guess.
Leaves to the caller: what a field means (a rule token, a path) and what a run-time part may be.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


MAX_FIELDS = 256

_SEQUENCE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?\Z")
_LETTERS = re.compile(r"([A-Za-z0-9])\.\.([A-Za-z0-9])(?:\.\.(-?\d+))?\Z")
_GLOB_CHARS = frozenset("*?[")
_INTEGER_VARIABLES = frozenset("?#$!")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_NUMBER = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}
_DQ_ESCAPES = frozenset('$`"\\')


class Dynamic(enum.StrEnum):
    PARAMETER = "parameter"  # $X, ${X…}, $1, $@: the environment or the line sets it
    SUBSTITUTION = "substitution"  # $(…), `…`: another command's output
    INTEGER = "integer"  # $((…)), $?, $#, $$, $!: an integer, nothing else
    PROCESS = "process"  # <(…), >(…): a /dev/fd path
    UNREAD = "unread"  # a form this reader does not expand exactly


# A run-time part's stand-in when a field is judged as a path: what the part can become.
_PROBES = {Dynamic.INTEGER: "0", Dynamic.PROCESS: "/dev/fd/63"}


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a word: quote-removed text, run-time parts shown by their source."""

    text: str
    dynamic: frozenset[Dynamic] = frozenset()
    glob: str | None = None  # an fnmatch pattern (quoted metacharacters bracketed) when globbing
    tilde: bool = False  # an unquoted leading `~…` prefix bash replaces by a home directory
    probe: str | None = None  # integer / process parts replaced by stand-ins (None: other kinds)

    @property
    def static(self) -> str | None:
        """The field's value when bash cannot change it at run time, else None."""
        return self.text if not self.dynamic and self.glob is None else None


@dataclass(frozen=True, slots=True)
class _Part:
    kind: Dynamic
    source: str


_QUOTED = frozenset({"raw_string", "ansi_c_string", "string"})
_QUOTE_MARK = ("", False)
# An atom is a character with its "active" flag (unquoted, unescaped: bash may act on it) or a
# run-time part.
_Atom = tuple[str, bool] | _Part


def unread(source: str) -> Field:
    return Field(source, frozenset({Dynamic.UNREAD}))


def fields(data: bytes, node: Node) -> tuple[Field, ...]:
    """The fields bash makes of the word under `node` (see the module contract)."""
    source = data[node.start_byte : node.end_byte].decode("utf-8")
    if "\\\n" in source or "\\$" in source or "\\`" in source:
        return (unread(source),)
    atoms: list[_Atom] = []
    if not _read(data, node, atoms):
        return (unread(source),)
    expanded = _braces(atoms)
    # bash drops a field brace expansion left empty (`{,z}` is one word); quotes are not empty.
    kept = [group for group in (expanded or []) if group]
    if not kept:
        return (unread(source),)
    return tuple(_field(group) for group in kept)


def _read(data: bytes, node: Node, out: list[_Atom]) -> bool:
    kind = node.type
    text = data[node.start_byte : node.end_byte].decode("utf-8")
    if kind in ("word", "number", "brace_expression"):
        return _unquoted(text, out)
    if kind in _QUOTED:
        out.append(_QUOTE_MARK)  # `''` is an empty word, not no word
    if kind == "raw_string":
        out.extend((ch, False) for ch in text[1:-1])
        return True
    if kind == "ansi_c_string":
        decoded = ansi_c(text[2:-1])
        out.extend((ch, False) for ch in decoded or "")
        return decoded is not None
    if kind == "string":
        return _double_quoted(data, node, out)
    if kind == "concatenation":
        return all(_read(data, child, out) for child in node.children)
    dynamic = _dynamic_kind(node)
    if dynamic is None:
        return False
    out.append(_Part(dynamic, text))
    return True


def _dynamic_kind(node: Node) -> Dynamic | None:
    kind = node.type
    if kind == "simple_expansion":
        special = next((c for c in node.named_children if c.type == "special_variable_name"), None)
        name = special.text.decode() if special is not None and special.text else ""
        return Dynamic.INTEGER if name in _INTEGER_VARIABLES else Dynamic.PARAMETER
    return {
        "expansion": Dynamic.PARAMETER,
        "command_substitution": Dynamic.SUBSTITUTION,
        "arithmetic_expansion": Dynamic.INTEGER,
        "process_substitution": Dynamic.PROCESS,
    }.get(kind)


def _unquoted(text: str, out: list[_Atom]) -> bool:
    if "`" in text.replace("\\`", ""):
        return False  # a backtick the grammar left as text: bash substitutes it
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append((text[i + 1], False))
            i += 2
            continue
        out.append((ch, True))
        i += 1
    return True


def _double_quoted(data: bytes, node: Node, out: list[_Atom]) -> bool:
    """`"…"`: the gaps between its expansions are text (the grammar may not cover them all)."""
    at = node.start_byte + 1
    end = node.end_byte - 1
    for child in node.named_children:
        if child.type == "string_content":
            continue
        if not _string_text(data[at : child.start_byte].decode("utf-8"), out):
            return False
        dynamic = _dynamic_kind(child)
        if dynamic is None:
            return False
        out.append(_Part(dynamic, data[child.start_byte : child.end_byte].decode("utf-8")))
        at = child.end_byte
    return _string_text(data[at:end].decode("utf-8"), out)


def _string_text(text: str, out: list[_Atom]) -> bool:
    if "`" in text.replace("\\`", "") or "$(" in text:
        return False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _DQ_ESCAPES:
            out.append((text[i + 1], False))
            i += 2
            continue
        out.append((ch, False))
        i += 1
    return True


def ansi_c(body: str) -> str | None:
    """The text of `$'body'`; None for escapes bash makes locale- or byte-dependent (or NUL)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if ch != "\\" or not nxt:
            out.append(ch)
            i += 1
            continue
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        if nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert digits is not None
            code, used = int(digits.group(), 8), len(digits.group())
        elif nxt in _ANSI_NUMBER:
            base, most = _ANSI_NUMBER[nxt]
            digits = re.match(rf"[0-9A-Fa-f]{{1,{most}}}", body[i + 2 :])
            if digits is None:
                return None
            code, used = int(digits.group(), base), len(digits.group()) + 1
        elif nxt == "c":
            return None  # control characters: rare, and bash's table has corner cases
        else:
            out.append(ch + nxt)
            i += 2
            continue
        if code == 0 or code > 0x7F:
            return None
        out.append(chr(code))
        i += 1 + used
    return "".join(out)


def _is(atom: _Atom, ch: str) -> bool:
    return isinstance(atom, tuple) and atom[1] and atom[0] == ch


def _braces(atoms: list[_Atom]) -> list[list[_Atom]] | None:
    """Brace expansion, left to right; None when the word is outside what this reader follows."""
    out: list[list[_Atom]] = []
    pending: list[tuple[list[_Atom], list[_Atom]]] = [([], atoms)]
    while pending:
        done, rest = pending.pop()
        start = next((i for i, a in enumerate(rest) if _is(a, "{")), None)
        end = (
            None
            if start is None
            else next((i for i in range(start + 1, len(rest)) if _is(rest[i], "}")), None)
        )
        if start is None or end is None:
            if start is not None and any(_is(a, "{") for a in rest[start + 1 :]):
                return None  # `{x{a,b}`: bash's reading of unbalanced braces is not followed
            out.append(done + rest)
        else:
            if any(_is(a, "{") for a in rest[start + 1 : end]):
                return None  # nested braces
            alternatives = _alternatives(rest[start + 1 : end])
            if alternatives is None:
                return None
            head = done + rest[:start]
            if not alternatives:  # not an expansion: the braces are text
                pending.append((done + rest[: end + 1], rest[end + 1 :]))
                continue
            pending.extend((head + alt, rest[end + 1 :]) for alt in reversed(alternatives))
        if len(out) + len(pending) > MAX_FIELDS:
            return None
    return out


def _alternatives(inner: list[_Atom]) -> list[list[_Atom]] | None:
    """The words `{inner}` stands for; [] when it is plain text; None when not followed."""
    if any(_is(a, ",") for a in inner):
        groups: list[list[_Atom]] = [[]]
        for atom in inner:
            if _is(atom, ","):
                groups.append([])
            else:
                groups[-1].append(atom)
        return groups
    text = "".join(a[0] for a in inner if isinstance(a, tuple))
    if ".." not in text:
        return []
    if len(text) != len(inner) or not all(isinstance(a, tuple) and a[1] for a in inner):
        return [] if _quoted_dots(inner) else None
    values = _sequence(text)
    if values is None:
        return None
    return [[(ch, False) for ch in value] for value in values]


def _quoted_dots(inner: list[_Atom]) -> bool:
    """`{1"..."3}`: a quoted or run-time part makes bash take the braces as text."""
    return any(isinstance(a, _Part) or not a[1] for a in inner)


def _sequence(text: str) -> list[str] | None:
    numbers = _SEQUENCE.match(text)
    letters = None if numbers else _LETTERS.match(text)
    match = numbers or letters
    if match is None:
        return None
    step = abs(int(match.group(3) or "1")) or 1
    if numbers:
        first, last = int(match.group(1)), int(match.group(2))
        width = max(_width(match.group(1)), _width(match.group(2)))
    else:
        if match.group(1).isdigit() != match.group(2).isdigit():
            return None  # mixed letter/digit ranges
        first, last, width = ord(match.group(1)), ord(match.group(2)), 0
        if not all(chr(c).isalnum() for c in range(min(first, last), max(first, last) + 1)):
            return None  # a letter range through punctuation
    if abs(last - first) // step + 1 > MAX_FIELDS:
        return None
    span = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
    if letters:
        return [chr(c) for c in span]
    return [f"{n:0{width}d}" for n in span]


def _width(number: str) -> int:
    digits = number.lstrip("-")
    return len(number) if len(digits) > 1 and digits.startswith("0") else 0


def _field(atoms: list[_Atom]) -> Field:
    text: list[str] = []
    probe: list[str] = []
    pattern: list[str] = []
    kinds: set[Dynamic] = set()
    globbing = False
    for atom in atoms:
        if isinstance(atom, _Part):
            kinds.add(atom.kind)
            text.append(atom.source)
            stand_in = _PROBES.get(atom.kind, "")
            probe.append(stand_in)
            pattern.append(stand_in)
            continue
        ch, active = atom
        text.append(ch)
        probe.append(ch)
        if active and ch in _GLOB_CHARS:
            globbing = True
            pattern.append(ch)
        else:
            pattern.append(f"[{ch}]" if ch in _GLOB_CHARS else ch)
    return Field(
        text="".join(text),
        dynamic=frozenset(kinds),
        glob="".join(pattern) if globbing else None,
        tilde=_tilde(atoms),
        probe="".join(probe) if kinds <= set(_PROBES) else None,
    )


def _tilde(atoms: list[_Atom]) -> bool:
    """bash expands a leading `~…` only when every character up to the first `/` is unquoted."""
    if not atoms or not _is(atoms[0], "~"):
        return False
    for atom in atoms[1:]:
        if _is(atom, "/"):
            return True
        if isinstance(atom, _Part) or not atom[1]:
            return False
    return True
