"""The bubblewrap provider's mount plan and the bounded walk that finds protected names.

Guarantees:
- `plan(mounts, base_hidden)` orders mounts so that the rule on the deepest path wins: mounts
  are emitted by path depth, and at equal paths in rank order (`HIDE` < `SHOW` < `BIND` <
  `PROTECT`), a later mount covering an earlier one. So a workspace or a host tool path inside a
  hidden directory is shown again, a hidden path inside the workspace stays hidden, and a
  protected path inside a writable area stays read-only — whatever order the host listed them in.
- A hidden directory becomes an empty tmpfs, remounted read-only only after everything under it
  is mounted (so the mount points of what is shown again can be made); a hidden file (or any
  other non-directory) is covered by the host's `/dev/null`, bound read-only. Hidden paths are
  resolved first (a symbolic link hides its target, which is where a read would land); one that
  does not exist is skipped; one whose nearest enclosing mount is already a hide (the base
  `/tmp` and `/run` masks included) is dropped — it is invisible already.
- `find_named(root, names, ...)` walks `root` breadth-first without following symbolic links and
  returns every entry whose name matches one of `names` case-insensitively (`.GIT` as `.git`: on
  a case-insensitive filesystem they are the same entry), at any depth. It does not descend into
  a match (it is protected whole). A directory named in `shallow` is looked into two levels only
  (its entries and its subdirectories' entries), never skipped. More than `limit` directories
  scanned is a `SetupError`: the walk never silently stops short of a protected entry.
Refuses: nothing else; what to hide, show and protect is the provider's and the host's choice.
"""

from __future__ import annotations

import enum
import os
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from yagent.kernel.confine.sandbox.errors import SetupError

WALK_LIMIT = 50_000
"""Directories `find_named` may scan before it refuses (a seam; see the module contract)."""
_NULL = "/dev/null"


class Rank(enum.IntEnum):
    """At equal paths, the later rank is mounted last and wins."""

    HIDE = 0
    SHOW = 1
    BIND = 2
    PROTECT = 3


@dataclass(frozen=True, slots=True)
class Mount:
    """One path's rule: `args` are its bwrap arguments (a `HIDE` mount's are made by `plan`)."""

    path: Path
    rank: Rank
    args: tuple[str, ...] = ()


def hide(path: str | os.PathLike[str]) -> Mount | None:
    """A mount hiding `path` (its resolved target), or None when there is nothing to hide."""
    try:
        real = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return None  # missing (or a link loop): nothing a program could read there
    if real == Path("/"):
        raise SetupError("the root directory cannot be hidden: nothing would be left to run")
    return Mount(real, Rank.HIDE)


def show(path: Path) -> Mount:
    return Mount(path, Rank.SHOW, ("--ro-bind", str(path), str(path)))


def plan(mounts: Iterable[Mount], base_hidden: Sequence[Path] = ()) -> list[str]:
    """bwrap arguments for `mounts`, deepest rule last (see the module contract)."""
    unique = dict.fromkeys(mounts)  # the same rule twice is mounted once; the host's order kept
    ordered = sorted(unique, key=lambda m: (len(m.path.parts), m.rank))
    hidden_dirs: list[Path] = []
    argv: list[str] = []
    placed: list[Mount] = [Mount(p, Rank.HIDE) for p in base_hidden]
    for mount in ordered:
        if mount.rank is Rank.HIDE:
            if _enclosing_is_hide(mount.path, placed):
                continue
            if mount.path.is_dir():
                argv += ["--tmpfs", str(mount.path)]
                hidden_dirs.append(mount.path)
            else:
                argv += ["--ro-bind", _NULL, str(mount.path)]
        else:
            argv += mount.args
        placed.append(mount)
    for path in hidden_dirs:
        argv += ["--remount-ro", str(path)]
    return argv


def _enclosing_is_hide(path: Path, placed: Sequence[Mount]) -> bool:
    """Whether the deepest mount placed at or above `path` (the last one, at equal depth) hides."""
    best: Mount | None = None
    for mount in placed:
        if path.is_relative_to(mount.path) and (
            best is None or len(mount.path.parts) >= len(best.path.parts)
        ):
            best = mount
    return best is not None and best.rank is Rank.HIDE


def find_named(
    root: Path,
    names: Iterable[str],
    *,
    shallow: Iterable[str] = (),
    limit: int | None = None,
) -> list[Path]:
    """Every entry under `root` named like one of `names` (see the module contract)."""
    wanted = {name.casefold() for name in names}
    brief = {name.casefold() for name in shallow}
    bound = WALK_LIMIT if limit is None else limit
    found: list[Path] = []
    queue: deque[tuple[str, int | None]] = deque([(str(root), None)])
    scanned = 0
    while queue:
        directory, levels = queue.popleft()
        scanned += 1
        if scanned > bound:
            raise SetupError(
                f"the workspace {str(root)!r} has more than {bound} directories to search for "
                f"{', '.join(sorted(wanted))}; the sandbox is not built rather than leave one "
                "writable"
            )
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError:
            continue  # unreadable here: a sandboxed program cannot read it either
        for entry in listed:
            folded = entry.name.casefold()
            if folded in wanted:
                found.append(Path(entry.path))
                continue
            if levels == 0 or not entry.is_dir(follow_symlinks=False):
                continue
            below = levels - 1 if levels is not None else (1 if folded in brief else None)
            queue.append((entry.path, below))
    return found
