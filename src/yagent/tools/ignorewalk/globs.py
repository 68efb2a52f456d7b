"""ignorewalk.globs: gitignore lines and `--glob` filters, with ripgrep's exact grammar.

Contract:
- `parse_line` reads one gitignore line the way ripgrep's `ignore` crate does (comments, `!`
  negation, `\\!` / `\\#` escapes, leading `/` anchors, trailing `/` means directories only, a
  pattern without `/` matches at any depth, `x/**` matches what is inside `x` but not `x`).
- `to_regex` translates a glob with globset's rules under `literal_separator`: `*` and `?` stay
  within one path component, `**/`, `/**/` and `/**` cross components, `[...]` / `[!...]` classes
  (`[!...]` / `[^...]` negated, `]` first is a member), `{a,b}` alternatives, `\\` escapes.
- A glob matches the entry's own relative path, never "because a parent matched" — the walker
  prunes ignored directories, as ripgrep does. (This is why `pathspec` is not used here: it
  applies git's "contents of a matched directory" rule and has no `{a,b}`, so the fallback would
  disagree with rg on a search root inside an ignored directory and on brace globs.)
Refuses: an unclosed `{` or `[`, or a dangling `\\` (`GlobError`), as ripgrep 14's globset does;
in an ignore file such a line is skipped and reported, the other lines still apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Glob", "GlobError", "GlobList", "parse_line", "to_regex"]


class GlobError(ValueError):
    """A glob that ripgrep would refuse too."""


@dataclass(frozen=True, slots=True)
class Glob:
    original: str
    regex: re.Pattern[str]
    negated: bool  # a leading `!`
    dir_only: bool  # a trailing `/`


def _class(glob: str, i: int) -> tuple[str, int] | None:
    """The regex of the class opening at glob[i] == '[' and the index after it; None if unclosed."""
    j = i + 1
    negate = j < len(glob) and glob[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(glob) and glob[j] == "]":
        j += 1  # a `]` right after the opening is a literal member
    while j < len(glob) and glob[j] != "]":
        j += 1
    if j >= len(glob):
        return None
    # Only `-` keeps a meaning inside the class; escape what Python's sets treat specially.
    body = "".join("\\" + c if c in "\\[]^&~|" else c for c in glob[start:j])
    return ("[^" if negate else "[") + body + "]", j + 1


class _Parser:
    """globset's glob parser, reduced to what a regex needs. Tokens are (kind, regex-text)."""

    def __init__(self, glob: str) -> None:
        self.glob = glob
        self.i = 0
        # The base token list, then one list per branch of the open `{...}` (never nested).
        self.stack: list[list[tuple[str, str]]] = [[]]

    def push(self, kind: str, text: str) -> None:
        self.stack[-1].append((kind, text))

    def parse(self) -> list[tuple[str, str]]:
        glob = self.glob
        while self.i < len(glob):
            ch = glob[self.i]
            self.i += 1
            if ch == "\\":
                if self.i >= len(glob):
                    raise GlobError(f"dangling '\\' in glob {glob!r}")
                self.push("lit", re.escape(glob[self.i]))
                self.i += 1
            elif ch == "*":
                self._star()
            elif ch == "?":
                self.push("any", "[^/]")
            elif ch == "[":
                cls = _class(glob, self.i - 1)
                if cls is None:  # ripgrep 14 refuses it (newer ones read a literal `[`)
                    raise GlobError(f"unclosed character class in glob {glob!r}; missing ']'")
                self.push("class", cls[0])
                self.i = cls[1]
            elif ch == "{":
                if len(self.stack) > 1:
                    raise GlobError(f"nested alternate groups are not allowed in glob {glob!r}")
                self.stack.append([])
            elif ch == "," and len(self.stack) > 1:
                self.stack.append([])
            elif ch == "}":
                # globset's quirks, kept: empty branches vanish, a stray `}` is an empty token.
                parts = [text for text in map(_join, self.stack[1:]) if text]
                del self.stack[1:]
                self.push("alt", "(?:" + "|".join(parts) + ")" if parts else "")
            else:
                self.push("lit", "/" if ch == "/" else re.escape(ch))
        if len(self.stack) > 1:
            raise GlobError(f"unclosed alternate group in glob {glob!r}; missing '}}'")
        return self.stack[0]

    def _star(self) -> None:
        glob, prev = self.glob, self.glob[self.i - 2] if self.i >= 2 else ""
        if glob[self.i : self.i + 1] != "*":
            self.push("star", "[^/]*")
            return
        self.i += 1
        nxt = glob[self.i : self.i + 1]
        if not self.stack[-1]:
            if nxt not in ("", "/"):
                self.push("star", "[^/]*")
                return
            self.i += len(nxt)
            self.push("rprefix", "(?:/?|.*/)")
            return
        in_group = len(self.stack) > 1
        if prev != "/" and not (in_group and prev in ",{"):
            self.push("star", "[^/]*")
            return
        if nxt == "" or (in_group and nxt in ",}"):
            suffix = True
        elif nxt == "/":
            self.i += 1
            suffix = False
        else:
            self.push("star", "[^/]*")
            return
        last = self.stack[-1].pop()
        if last[0] in ("rprefix", "rsuffix"):
            self.push(*last)
        elif suffix:
            self.push("rsuffix", "/.*")
        else:
            self.push("rzero", "(?:/|/.*/)")


def _join(tokens: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in tokens)


def to_regex(glob: str) -> str:
    tokens = _Parser(glob).parse()
    if len(tokens) == 1 and tokens[0][0] == "rprefix":
        return ".*"  # the glob `**` alone matches everything
    return _join(tokens)


def parse_line(line: str) -> Glob | None:
    """One gitignore line → a Glob; None for blanks and comments."""
    original = line
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line:
        return None
    negated = anchored = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
        anchored = line.startswith("/")
    else:
        if line.startswith("!"):
            negated, line = True, line[1:]
        if line.startswith("/"):
            anchored, line = True, line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    if not anchored and "/" not in line and not line.startswith("**/"):
        line = "**/" + line
    if line.endswith("/**"):
        line += "/*"
    return Glob(original, re.compile(to_regex(line)), negated, dir_only)


class GlobList:
    """The globs of one ignore file (or of a filter list), in order: the last match decides."""

    __slots__ = ("any_regex", "globs", "problems")

    def __init__(self, lines: list[str], *, source: str | None = None) -> None:
        """Strict without a `source` (a bad glob raises); an ignore file's bad lines are skipped
        and described in `problems`, as rg skips them with a message."""
        globs: list[Glob] = []
        self.problems: list[str] = []
        for number, line in enumerate(lines, 1):
            try:
                glob = parse_line(line)
            except GlobError as exc:
                if source is None:
                    raise
                self.problems.append(f"{source}: line {number}: {exc}")
                continue
            if glob is not None:
                globs.append(glob)
        self.globs: tuple[Glob, ...] = tuple(globs)
        # One alternation answers "does anything match?" — the common answer is no.
        joined = "|".join(f"(?:{g.regex.pattern})" for g in globs)
        self.any_regex = re.compile(joined) if globs else None

    def __bool__(self) -> bool:
        return bool(self.globs)

    def match(self, rel: str, is_dir: bool) -> Glob | None:
        """The deciding glob for `rel` (relative to this list's directory), or None."""
        if self.any_regex is None or self.any_regex.fullmatch(rel) is None:
            return None
        for glob in reversed(self.globs):
            if (is_dir or not glob.dir_only) and glob.regex.fullmatch(rel):
                return glob
        return None
