"""Operands as paths: lexical normalisation, placement, and whether one names another.

Guarantees:
- An `Operand` is a path (root `/`, `~` or relative, and its segments after lexical
  normalisation: `//` → `/`, `.` dropped, `..` resolved on the text, `/..` is `/`), a glob (the
  same, its segments fnmatch patterns), plain text, or unknown (known only at run time).
  `$HOME`/`${HOME}` read as `~`; `~user`, `~+`, `~-` are unknown.
- `place` puts a relative operand in the host's working directory and `~` at its home
  (`Where`); on a line that may change directory a relative operand is unknown.
- `on_disk(operand, placed, where, follow_last)`, when the host lets cmdpolicy look at the disk
  (`Where.disk`), is where a path operand leads now: `os.path.realpath` of its written text
  (symbolic links followed, `..` after a link taken on the disk) — the last component left
  unfollowed when `follow_last` is False and the word does not end in `/` or `/.` (`rm -rf
  link` removes the link) — and, for a glob, of its part before the first wildcard. None when it
  leads where its lexical reading says or it is not a path; unknown when it cannot be resolved
  (over `PATH_MAX` bytes, a NUL).
- `reaches(have, want, deep)` is DEFINITE when `have` names `want` — the same path, a path above
  it when `deep` (a recursive delete; `/` holds everything), a glob that can name it or a path
  above it, or one naming everything in it (a last segment of wildcards alone: `/*`, `/???`) —
  POSSIBLE when `have` is unknown, NO otherwise. A rule's own path may be a pattern: a segment
  with wildcards names what it matches (`/dev/sd*`), a last `**` every path below
  (`/etc/**`); a rule's text with wildcards (dd's `of=/dev/sd*`) names the texts it matches.
Reads no file except through `on_disk`, and only when `Where.disk` says so.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from yagent.kernel.confine.beneath import PATH_MAX
from yagent.kernel.confine.cmdpolicy.expand import Dynamic
from yagent.kernel.confine.cmdpolicy.model import Arg

NO, DEFINITE, POSSIBLE = 0, 1, 2

_HOME = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`]*)?\Z")
_BRACKETS = re.compile(r"\[[!^]?\]?[^\]]*\]")
_WILD = re.compile(r"[*?\[]")


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
    disk: bool = False  # path operands may be resolved on the disk (`on_disk`)
    linked: bool = False  # the line may make or re-point links before a command runs
    readable: Callable[[str], bool] | None = None  # the host's word on a file cmdpolicy may read
    # `on_disk` answers for this judgement (one line: each operand resolved once)
    resolved: dict[tuple[object, ...], Operand | None] = field(default_factory=dict, compare=False)


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


def on_disk(operand: Operand, placed: Operand, where: Where, follow_last: bool) -> Operand | None:
    """Where `operand` (as written; `placed` as placed) leads on the disk now (module contract)."""
    if not where.disk or placed.kind not in ("path", "glob") or not placed.segments:
        return None  # `/` itself is never a link
    if placed.root != "/":
        return None
    key = (operand.kind, operand.root, operand.text, operand.segments, follow_last)
    if key not in where.resolved:
        where.resolved[key] = _on_disk(operand, placed, where, follow_last)
    return where.resolved[key]


def _on_disk(operand: Operand, placed: Operand, where: Where, follow_last: bool) -> Operand | None:
    base = {"/": "/", "~": where.home, "": where.cwd}[operand.root]
    if base is None:
        return None
    tail: tuple[str, ...] = ()
    if operand.kind == "path":
        text = operand.text[1:].lstrip("/") if operand.root == "~" else operand.text
    else:
        wild = (i for i, s in enumerate(operand.segments) if _WILD.search(s))
        cut = next(wild, len(operand.segments))
        text, tail = "/".join(operand.segments[:cut]), operand.segments[cut:]
    full = os.path.join(base, text)
    last = os.path.basename(full)
    keep = not follow_last and not tail and last not in ("", ".", "..")
    if len(full.encode("utf-8", "surrogateescape")) >= PATH_MAX or "\0" in full:
        return UNKNOWN
    try:
        real = _resolve(where, base, os.path.dirname(text) if keep else text)
    except (OSError, ValueError):
        return UNKNOWN
    if len(real.encode("utf-8", "surrogateescape")) >= PATH_MAX:
        return UNKNOWN
    root, segments = _split(os.path.join(real, last) if keep else real)
    found = Operand(placed.kind, placed.text, root, segments + tail)
    return None if (found.root, found.segments) == (placed.root, placed.segments) else found


def _resolve(where: Where, base: str, text: str) -> str:
    """`os.path.realpath(base/text)`, looking only at `text`'s components (`base` resolved once
    per judgement): a missing component ends the look (nothing below it can be a link), the
    first link hands the rest to `realpath`."""
    key = ("base", base)
    if key not in where.resolved:
        where.resolved[key] = Operand("text", os.path.realpath(base))
    path = where.resolved[key].text  # type: ignore[union-attr]
    parts = text.split("/")
    if text.startswith("/"):
        path = "/"
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            path = os.path.dirname(path)
            continue
        step = os.path.join(path, part)
        try:
            mode = os.lstat(step).st_mode
        except OSError:
            return os.path.normpath(os.path.join(step, *parts[i + 1 :]))
        if stat.S_ISLNK(mode):
            return os.path.realpath(os.path.join(step, *parts[i + 1 :]))
        path = step
    return path


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
    if have.kind == want.kind == "text" and _WILD.search(want.text):
        return DEFINITE if fnmatch.fnmatchcase(have.text, want.text) else NO
    if want.kind != "path" or have.kind == "text":
        return DEFINITE if have.kind == want.kind and have.shown == want.shown else NO
    if any(_WILD.search(s) for s in want.segments):
        return _pattern_reaches(have, want, deep)
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


def _pattern_reaches(have: Operand, want: Operand, deep: bool) -> int:
    """`reaches` for a rule's path holding wildcards (`/dev/sd*`, `/etc/**`)."""
    wanted = want.segments
    below = wanted[-1] == "**"
    fixed = wanted[:-1] if below else wanted
    segments = have.segments
    if have.root != want.root:
        return NO
    if (
        deep
        and len(segments) <= len(fixed)
        and all(_either(name, pattern) for name, pattern in zip(segments, fixed, strict=False))
    ):
        return DEFINITE  # a recursive delete of a directory above what the pattern names
    if len(segments) < len(fixed) or (len(segments) > len(fixed) and not below):
        return NO
    if below and len(segments) == len(fixed):
        return NO
    if have.kind == "glob" and len(segments) > len(fixed) and _wildcards_only(segments[-1]):
        segments = segments[: len(fixed) + 1]  # `/etc/*` names everything in /etc
    pairs = zip(segments, fixed, strict=False)
    return DEFINITE if all(_either(name, pattern) for name, pattern in pairs) else NO


def _either(name: str, pattern: str) -> bool:
    """A command's segment (a name, or its own glob) that can be what a rule's pattern names."""
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(pattern, name)


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
