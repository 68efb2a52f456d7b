"""Read-rule entries (`[sandbox] deny_read`): a plain path, or a gitignore-style pattern such as
Claude's `Read(./secrets/**)` or `Read(**/*.pem)`.

Contract:
- `split(entry)` reads one entry: a leading `./` is dropped and a trailing `/**`, `/**/*` or `/*`
  names the folder itself (hiding a folder hides everything in it, so `secrets/**` and `secrets`
  hide the same files). What is left without `*`, `?` or `[` is a plain path (`Plain`), handled
  as before (`tools.readmask`). Otherwise it is a `Pattern`: the components before the first
  globbed one are its folder (`~/`, absolute or workspace-relative), the rest a gitwildmatch
  pattern below that folder — anchored when the entry holds a `/` (`config/*.pem`: only in
  `config/`), at any depth when it does not (`*.pem`), as in a `.gitignore`.
- `Pattern.covers(path)` is the path at or above `path` (absolute, links resolved) that the
  pattern matches, or None: the file tools refuse such a path like any hidden one.
- `Pattern.existing()` lists the paths that match now (`.git/` is not entered; a matched folder is
  not entered either: it is hidden whole). The sandbox hides those — found when it is set up, so
  a matching file created later in the session is refused by the file tools but not hidden from
  commands until the next session (docs/security.md says so). A folder with more than
  `MAX_WALK` entries is not walked to the end: `ReadPatternError` names the entry (fail closed —
  write the folder itself instead).
Leaves to the host: where entries come from and what is done with the matches (`tools.readmask`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from yagent.tools.treewalk import walk

GLOB_CHARS = frozenset("*?[")
MAX_WALK = 200_000
_FOLDER_TAILS = ("/**/*", "/**", "/*")


class ReadPatternError(ValueError):
    """A read pattern whose folder is too large to hide its matches."""


@dataclass(frozen=True, slots=True)
class Plain:
    """A plain path entry, as written after its glob tail was read (`~` not yet expanded)."""

    text: str


@dataclass(frozen=True, slots=True)
class Pattern:
    """A gitwildmatch `pattern` below `folder` (absolute); `entry` is what was written."""

    entry: str
    folder: Path
    pattern: str
    _regex: re.Pattern[str] = field(init=False, compare=False, repr=False)
    _roots: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # git's own reading of the line (pathspec); its regex also matches what lies inside a
        # matched folder (`(?:/|$)` after the match), so one `match` covers "at or above"
        compiled = pathspec.GitIgnoreSpec.from_lines([self.pattern]).patterns[0]
        regex = getattr(compiled, "regex", None)
        if not isinstance(regex, re.Pattern):  # pragma: no cover - pathspec's own shape
            raise ReadPatternError(f"deny_read entry {self.entry!r} cannot be read as a pattern")
        object.__setattr__(self, "_regex", regex)
        roots = (str(self.folder), os.path.realpath(self.folder))
        object.__setattr__(self, "_roots", tuple(r.rstrip("/") + "/" for r in dict.fromkeys(roots)))

    def covers(self, resolved: str) -> Path | None:
        """The path at or above `resolved` this pattern matches, or None."""
        for root in self._roots:
            if not resolved.startswith(root):
                continue
            rel = resolved[len(root) :]
            found = self._regex.match(rel)
            if found is not None:
                return Path(root, rel[: found.end()].rstrip("/"))
        return None

    def _matches(self, rel: str) -> bool:
        return self._regex.match(rel) is not None

    def existing(self) -> list[Path]:
        """The paths that match now (see the module contract)."""
        found: list[Path] = []
        seen = 0
        for top, dirs, files in walk(self.folder):
            rel_top = os.path.relpath(top, self.folder)
            prefix = "" if rel_top == "." else rel_top + "/"
            seen += len(dirs) + len(files)
            if seen > MAX_WALK:
                raise ReadPatternError(
                    f"deny_read entry {self.entry!r}: {self.folder} holds more than {MAX_WALK} "
                    "entries, too many to find every match; hide a folder instead"
                )
            found.extend(Path(top, n) for n in files if self._matches(prefix + n))
            kept = []
            for name in sorted(dirs):
                if name == ".git" and not prefix:
                    continue
                if self._matches(prefix + name):
                    found.append(Path(top, name))
                elif not os.path.islink(os.path.join(top, name)):
                    kept.append(name)
            dirs[:] = kept
        return found


def _plain_text(entry: str) -> str:
    text = entry.strip()
    while text.startswith("./"):
        text = text[2:].lstrip("/") or "."
    changed = True
    while changed:
        changed = False
        for tail in _FOLDER_TAILS:
            if text.endswith(tail) and len(text) > len(tail):
                text, changed = text[: -len(tail)], True
    return text


def split(entry: str, workspace: Path, home: Path) -> Plain | Pattern:
    """One `deny_read` entry read (module contract); `home` expands `~`."""
    text = _plain_text(entry)
    if not any(c in GLOB_CHARS for c in text):
        return Plain(text)
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    base = Path(workspace) if not text.startswith("/") else Path("/")
    parts = [p for p in text.split("/") if p and p != "."]
    first = next(i for i, p in enumerate(parts) if any(c in GLOB_CHARS for c in p))
    folder = Path(os.path.abspath(base.joinpath(*parts[:first])))
    rest = "/".join(parts[first:])
    anchored = "/" in text.rstrip("/")
    return Pattern(entry, folder, "/" + rest if anchored else rest)


def read_entries(
    entries: tuple[str, ...], workspace: Path, home: Path
) -> tuple[tuple[str, ...], tuple[Pattern, ...]]:
    """`entries` split into plain paths (their glob tails read) and patterns."""
    plain: list[str] = []
    patterns: list[Pattern] = []
    for entry in entries:
        found = split(entry, workspace, home)
        if isinstance(found, Plain):
            plain.append(found.text)
        else:
            patterns.append(found)
    return tuple(plain), tuple(patterns)
