"""areas: isolation declarations for parallel workers, and the conflicts between them.

Guarantees (pure path logic; nothing here touches a file system):
- A `Declaration` names an owner and the paths it may write and the paths it may only read, all
  relative to one shared root the host chooses (`.` is the root itself). Paths are compared by
  component after normalising (`a//b/./c` is `a/b/c`), so `src` covers `src/x` but not `src2`.
- One declaration may not make a path both read-only and writable — nested carve-outs included
  (`src` writable with `src/gen` read-only is refused: there is no precedence rule to get wrong).
- Writable areas that overlap between two declarations conflict (`conflicts`, `check`,
  `Board.claim`); read-only overlaps, and a read-only area inside another's writable one, do not —
  reading does no harm, while two writers leave no single truth.
- Fail closed: a path that no entry of a declaration covers is neither readable nor writable.
Refuses (`DeclarationError`): wildcards — a `*` anywhere in a path is refused, because `*` and
`**` mean different things to different matchers and a contract read one way and judged another is
worse than none; the host expands patterns into exact paths. Also refused: absolute paths, `..`,
empty paths, NUL bytes, empty owners, two declarations with one owner.
Leaves to the host: creating, mounting or enforcing the areas (see `sandbox`).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations, pairwise

Parts = tuple[str, ...]


class WorktreeError(Exception):
    """Root of this module's errors."""


class DeclarationError(WorktreeError, ValueError):
    """A declaration (or a path in it) that cannot be judged."""


class ConflictError(WorktreeError):
    """Declarations whose writable areas overlap; `conflicts` lists every pair."""

    def __init__(self, conflicts: tuple[Conflict, ...]) -> None:
        shown = "; ".join(str(c) for c in conflicts)
        super().__init__(f"conflicting worktree declarations: {shown}")
        self.conflicts = conflicts


class Access(enum.IntEnum):
    NONE = 0
    READ = 1
    WRITE = 2


def normalise(path: str) -> Parts:
    """A root-relative path as components; refuses what cannot be compared exactly."""
    if not isinstance(path, str) or not path.strip():
        raise DeclarationError(f"a path must be a non-empty string, not {path!r}")
    if "*" in path:
        raise DeclarationError(
            f"path {path!r} holds a wildcard: '*' and '**' mean different things to different "
            "matchers, so declarations take exact paths only (expand the pattern first)"
        )
    if "\0" in path:
        raise DeclarationError(f"path {path!r} holds a NUL byte")
    if path.startswith("/"):
        raise DeclarationError(f"path {path!r} is absolute; declarations are relative to the root")
    parts = tuple(part for part in path.split("/") if part not in ("", "."))
    if ".." in parts:
        raise DeclarationError(f"path {path!r} climbs with '..'; write the path it means")
    return parts


def _show(parts: Parts) -> str:
    return "/".join(parts) or "."


def _covers(outer: Parts, inner: Parts) -> bool:
    return inner[: len(outer)] == outer


def _overlap(a: Parts, b: Parts) -> bool:
    return _covers(a, b) or _covers(b, a)


@dataclass(frozen=True, slots=True)
class Declaration:
    """What one worker may write and may only read. Build it with `Declaration.of`."""

    owner: str
    writable: tuple[Parts, ...]
    read_only: tuple[Parts, ...]

    @classmethod
    def of(
        cls, owner: str, *, writable: Iterable[str] = (), read_only: Iterable[str] = ()
    ) -> Declaration:
        """A checked declaration (see the module docstring for what is refused)."""
        if not isinstance(owner, str) or not owner.strip():
            raise DeclarationError(f"a declaration needs an owner, not {owner!r}")
        write = tuple(sorted({normalise(p) for p in writable}))
        read = tuple(sorted({normalise(p) for p in read_only}))
        for w in write:
            for r in read:
                if _overlap(w, r):
                    raise DeclarationError(
                        f"{owner!r} declares {_show(r)!r} read-only and {_show(w)!r} writable: "
                        "a path cannot be both (declare exact, disjoint areas)"
                    )
        return cls(owner, write, read)

    def access(self, path: str) -> Access:
        """What this declaration grants on `path`: NONE unless an entry covers it."""
        parts = normalise(path)
        if any(_covers(w, parts) for w in self.writable):
            return Access.WRITE
        if any(_covers(r, parts) for r in self.read_only):
            return Access.READ
        return Access.NONE

    def can_read(self, path: str) -> bool:
        return self.access(path) >= Access.READ

    def can_write(self, path: str) -> bool:
        return self.access(path) is Access.WRITE


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two owners whose writable areas overlap, and where."""

    first: str
    first_path: str
    second: str
    second_path: str

    def __str__(self) -> str:
        return (
            f"{self.first!r} writes {self.first_path!r} and {self.second!r} writes "
            f"{self.second_path!r}"
        )


def conflicts(declarations: Iterable[Declaration]) -> tuple[Conflict, ...]:
    """Every writable overlap between distinct declarations, in a deterministic order."""
    given = _by_owner(declarations)
    return tuple(
        Conflict(a.owner, _show(wa), b.owner, _show(wb))
        for a, b in combinations(given, 2)
        for wa in a.writable
        for wb in b.writable
        if _overlap(wa, wb)
    )


def check(declarations: Iterable[Declaration]) -> None:
    """Raise `ConflictError` (listing every conflict) unless the declarations can run together."""
    found = conflicts(declarations)
    if found:
        raise ConflictError(found)


def _by_owner(declarations: Iterable[Declaration]) -> list[Declaration]:
    listed = sorted(declarations, key=lambda d: d.owner)
    for a, b in pairwise(listed):
        if a.owner == b.owner:
            raise DeclarationError(f"two declarations are owned by {a.owner!r}")
    return listed


class Board:
    """The declarations of the workers running now; a conflicting claim is refused before start."""

    __slots__ = ("_active", "_lock")

    def __init__(self) -> None:
        self._active: dict[str, Declaration] = {}
        self._lock = threading.Lock()

    def claim(self, declaration: Declaration) -> None:
        """Admit `declaration` unless its owner is active or it conflicts with an active one."""
        with self._lock:
            if declaration.owner in self._active:
                raise DeclarationError(f"{declaration.owner!r} already holds a declaration")
            check([*self._active.values(), declaration])
            self._active[declaration.owner] = declaration

    def release(self, owner: str) -> bool:
        """Drop `owner`'s declaration; False when it held none."""
        with self._lock:
            return self._active.pop(owner, None) is not None

    def active(self) -> tuple[Declaration, ...]:
        with self._lock:
            return tuple(self._active[o] for o in sorted(self._active))

    def access(self, owner: str, path: str) -> Access:
        """What `owner` may do on `path` now; an owner without a declaration may do nothing."""
        with self._lock:
            held = self._active.get(owner)
        return Access.NONE if held is None else held.access(path)
