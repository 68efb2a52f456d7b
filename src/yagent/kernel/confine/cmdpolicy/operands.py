"""Operands as paths: lexical normalisation, placement, and whether one names another.

Guarantees:
- An `Operand` is a path (root `/`, `~` or relative, and its segments after lexical
  normalisation: `//` → `/`, `.` dropped, `..` resolved on the text, `/..` is `/`), a glob (the
  same, its segments fnmatch patterns), plain text, or unknown (known only at run time).
  `$HOME`/`${HOME}` read as `~`; `~user`, `~+`, `~-` are unknown.
- `place` puts a relative operand in the host's working directory and `~` at its home
  (`Where`); on a line that may change directory a relative operand is unknown.
- `reaches(have, want, deep)` is DEFINITE when `have` names `want` — the same path, a path above
  it when `deep` (a recursive delete; `/` holds everything), a glob that can name it or a path
  above it, or one naming everything in it (a last segment of wildcards alone: `/*`, `/???`) —
  POSSIBLE when `have` is unknown, NO otherwise.
Reads no file: symbolic links are not followed.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy.expand import Dynamic
from yagent.kernel.confine.cmdpolicy.model import Arg

NO, DEFINITE, POSSIBLE = 0, 1, 2

_HOME = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`]*)?\Z")
_BRACKETS = re.compile(r"\[[!^]?\]?[^\]]*\]")


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand: a path (`root` "/", "~" or "" for relative, and its segments), a glob (the
    same, segments being fnmatch patterns), plain text, or unknown (`kind` says which)."""

    kind: str  # "path" | "glob" | "text" | "unknown"
    text: str = ""
    root: str = ""
    segments: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        if self.kind in ("path", "glob"):
            return _join(self.root, self.segments)
        return self.text


UNKNOWN = Operand("unknown", "…")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command runs, as far as the host knows: relative operands start at `cwd`, `~` is
    `home` (None: not known; compared as written), `moved`: the line may change directory."""

    cwd: str | None = None
    home: str | None = None
    moved: bool = False


NOWHERE = Where()


def place(operand: Operand, where: Where) -> Operand:
    """`operand` as an absolute path where `where` says how (see the module contract)."""
    if operand.kind not in ("path", "glob"):
        return operand
    if operand.root == "~" and where.home:
        base = where.home
    elif operand.root == "" and where.moved:
        return UNKNOWN
    elif operand.root == "" and where.cwd:
        base = where.cwd
    else:
        return operand
    root, segments = _split("/".join((base, *operand.segments)))
    return Operand(operand.kind, operand.text, root, segments)


def word_operand(word: Arg) -> Operand:
    """A word read as a path: static, `$HOME…`, a glob, or unknown."""
    fields = word.expanded
    if word.value is not None:
        if _other_tilde(word.value) and any(f.tilde for f in fields):
            return UNKNOWN  # `~user`, `~+`, `~-`: a directory only run time knows
        return path_operand(word.value) if word.value else Operand("text", "")
    if len(fields) != 1:
        return UNKNOWN
    field = fields[0]
    if field.dynamic == {Dynamic.PARAMETER} and field.glob is None:
        home = _HOME.match(field.text)
        return path_operand("~" + (home.group(1) or "")) if home else UNKNOWN
    if field.dynamic or field.glob is None:
        return UNKNOWN
    pattern = field.glob
    if pattern.startswith("~") and not field.tilde:
        return UNKNOWN
    root, segments = _split(pattern)
    return Operand("glob", pattern, root, segments)


def _other_tilde(value: str) -> bool:
    return value.startswith("~") and value != "~" and not value.startswith("~/")


def path_operand(text: str) -> Operand:
    root, segments = _split(text)
    return Operand("path", text, root, segments)


def _split(text: str) -> tuple[str, tuple[str, ...]]:
    if text.startswith("/"):
        root, rest = "/", text
    elif text == "~" or text.startswith("~/"):
        root, rest = "~", text[1:]
    else:
        root, rest = "", text
    stack: list[str] = []
    for segment in rest.split("/"):
        if segment in ("", "."):
            continue
        if segment == ".." and stack and stack[-1] != "..":
            stack.pop()
        elif segment == ".." and root == "/":
            continue  # `/..` is `/`
        else:
            stack.append(segment)
    return root, tuple(stack)


def _join(root: str, segments: tuple[str, ...]) -> str:
    if root == "/":
        return "/" + "/".join(segments)
    if root == "~":
        return "/".join(("~", *segments))
    return "/".join(segments) or "."


def reaches(have: Operand, want: Operand, deep: bool) -> int:
    """Whether the command's operand `have` stands for (or, `deep`, holds) the rule's `want`."""
    if have.kind == "unknown" or want.kind == "unknown":
        return POSSIBLE
    if have.kind == "glob" and want.kind == "text":
        return POSSIBLE if fnmatch.fnmatchcase(want.text, have.text) else NO
    if want.kind != "path" or have.kind == "text":
        return DEFINITE if have.kind == want.kind and have.shown == want.shown else NO
    segments = have.segments
    whole = have.kind == "glob" and bool(segments) and _wildcards_only(segments[-1])
    if whole and (have.root, segments[:-1]) == (want.root, want.segments):
        return DEFINITE  # everything in the directory the rule names
    if deep and have.kind == "path" and have.root == "/" and not segments:
        return DEFINITE  # `/` holds every path, `~` and relative ones too
    if have.root != want.root or len(segments) > len(want.segments):
        return NO
    if len(segments) < len(want.segments) and not deep:
        return NO
    if have.kind == "path":
        return DEFINITE if want.segments[: len(segments)] == segments else NO
    pairs = zip(want.segments, segments, strict=False)
    if all(_names(name, pattern) for name, pattern in pairs):
        return DEFINITE
    return NO


def _wildcards_only(segment: str) -> bool:
    """A glob segment of wildcards alone (`*`, `.*`, `???`, `[a-z]*`, `.[!.]*`): it names a
    broad class of the directory's entries, which stands for the directory."""
    rest = _BRACKETS.sub("", segment.lstrip("."))
    return bool(rest) and set(rest) <= {"*", "?"}


def _names(name: str, pattern: str) -> bool:
    """bash's match of one path segment: a leading dot is matched only by a leading dot."""
    if name.startswith(".") and not pattern.startswith((".", "[.]")):
        return False
    return fnmatch.fnmatchcase(name, pattern)
