"""ignorewalk.tree: which entries ignore files hide, with ripgrep's precedence.

Contract (mirrors the `ignore` crate that ripgrep uses, default flags):
- Each directory may hold `.rgignore`, `.ignore`, `.gitignore` and `.git/info/exclude`. For one
  entry, each kind is looked up from the deepest directory upwards and the first deciding glob of
  that kind counts; the kinds then rank in that order (`.rgignore` beats `.ignore` beats
  `.gitignore` beats exclude). A `!` glob re-includes.
- `.gitignore` and exclude files count only inside a git repository (a `.git` in the entry's
  directory or above) and not above that repository's root. `.rgignore` / `.ignore` count anywhere.
- Directories above the walk's root count too (as rg reads parent ignore files).
- The user's global excludes file is not read; the rg command line says `--no-ignore-global`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from yagent.tools.ignorewalk.globs import GlobList

# Precedence order, highest first. The last two are git's and need a repository.
IGNORE_FILES: tuple[str, ...] = (".rgignore", ".ignore", ".gitignore", ".git/info/exclude")
_GIT_KINDS = (2, 3)
_ANY_KINDS = (0, 1)


@dataclass(frozen=True, slots=True)
class Level:
    """The ignore rules of one directory."""

    dir: str
    has_git: bool
    lists: tuple[GlobList | None, ...]


@dataclass(frozen=True, slots=True)
class Chain:
    """The levels that apply inside one directory, outermost first."""

    levels: tuple[Level, ...]
    any_git: bool


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return [line.removesuffix("\r") for line in text.split("\n")]


def _level(directory: str, problems: list[str]) -> Level | None:
    lists: list[GlobList | None] = []
    for name in IGNORE_FILES:
        path = os.path.join(directory, name)
        lines = _read_lines(path)
        parsed = GlobList(lines, source=path) if lines else None
        if parsed is not None:
            problems += parsed.problems
        lists.append(parsed if parsed else None)
    has_git = os.path.lexists(os.path.join(directory, ".git"))
    if not has_git and not any(lists):
        return None
    return Level(directory, has_git, tuple(lists))


def _relative(path: str, directory: str) -> str:
    if directory == "/":
        return path[1:]
    return path[len(directory) + 1 :]


class IgnoreTree:
    """Ignore decisions below one root (absolute, real path); chains are cached per directory."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.problems: list[str] = []  # bad lines of ignore files (skipped, as rg does)
        parents: list[Level] = []
        any_git = False
        base = os.path.dirname(root) if root != "/" else ""
        ancestors: list[str] = []
        while base:
            ancestors.append(base)
            base = "" if base == "/" else os.path.dirname(base)
        for directory in reversed(ancestors):
            level = _level(directory, self.problems)
            if level is not None:
                parents.append(level)
                any_git = any_git or level.has_git
        self._prefix = root.rstrip("/") + "/"
        self._cache: dict[str, Chain] = {}
        self._top = Chain(tuple(parents), any_git)

    def chain(self, directory: str) -> Chain:
        """The chain for `directory`, which must be the root or below it."""
        cached = self._cache.get(directory)
        if cached is not None:
            return cached
        if not directory.startswith(self._prefix) and directory != self.root:
            raise ValueError(f"{directory} is not inside the walk root {self.root}")
        outer = self._top if directory == self.root else self.chain(os.path.dirname(directory))
        level = _level(directory, self.problems)
        if level is None:
            chain = outer
        else:
            chain = Chain((*outer.levels, level), outer.any_git or level.has_git)
        self._cache[directory] = chain
        return chain

    def ignored(self, path: str, is_dir: bool, chain: Chain | None = None) -> bool:
        """True when the ignore files hide `path` (its parent directory's rules, `chain`)."""
        chain = chain if chain is not None else self.chain(os.path.dirname(path))
        decided: list[bool | None] = [None, None, None, None]
        saw_git = False
        for level in reversed(chain.levels):
            rel = _relative(path, level.dir)
            kinds = _ANY_KINDS + _GIT_KINDS if chain.any_git and not saw_git else _ANY_KINDS
            for kind in kinds:
                globs = level.lists[kind]
                if decided[kind] is None and globs is not None:
                    hit = globs.match(rel, is_dir)
                    if hit is not None:
                        decided[kind] = not hit.negated
            saw_git = saw_git or level.has_git
        for verdict in decided:
            if verdict is not None:
                return verdict
        return False
