"""Where a run works: the workspace is the repository's root, wherever in it yagent was started.

Contract:
- `locate(start)` walks up from `start` (resolved) to the nearest directory holding `.git` (a
  directory, or the gitfile of a worktree or submodule) and answers that directory as the
  workspace root, with `start` kept as the directory the person is in. Outside any repository
  the root is `start` itself — never a parent guessed from other files.
- The walk goes up to the filesystem root, as git's own discovery does (a repository whose root
  is `$HOME` — dotfiles — is found like any other).
- Nothing is created or read besides the `.git` entries' existence.
Leaves to the caller: what the root is used for (configuration, instructions, the guard).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Place:
    root: Path  # the workspace: the repository's root (or `start` outside a repository)
    start: Path  # where the person started yagent (`-C DIR` or the current directory)


def locate(start: Path) -> Place:
    """The workspace root for a run started in `start` (see the module contract)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return Place(folder, here)
    return Place(here, here)
