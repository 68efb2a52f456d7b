"""ignorewalk.walk: the files ripgrep would visit, in the order `rg --sort path` visits them.

Contract:
- Depth-first; each directory's entries sorted by the bytes of their names, files and
  directories interleaved (ripgrep's `--sort path`).
- Hidden entries are visited (rg `--hidden`); anything named `.git` never is; symbolic links are
  not followed (rg's default); only regular files are yielded.
- Ignored directories are pruned, ignored files skipped (`IgnoreTree`). A `Filter` (the `--glob`
  list) only narrows: a glob never brings back what an ignore file hides.
- An explicit file root is yielded as is, ignored or not, as rg searches a file it is given.
- Directories that cannot be listed are reported in `errors` (a visible list), not raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from yagent.tools.ignorewalk.globs import GlobList
from yagent.tools.ignorewalk.tree import Chain, IgnoreTree

SKIPPED_NAMES = frozenset({".git"})


class Filter:
    """rg's `--glob` list: a plain glob keeps only what it matches, a `!glob` drops what it matches.

    Globs with a `/` are matched relative to `base` (rg runs with the workspace as its working
    directory), the others against the name at any depth. The last matching glob decides.
    """

    def __init__(self, globs: Sequence[str], base: str) -> None:
        self.globs = GlobList(list(globs))
        self.base_prefix = base.rstrip("/") + "/"
        self.narrows = any(not g.negated for g in self.globs.globs)

    def keeps(self, path: str, is_dir: bool) -> bool:
        rel = path[len(self.base_prefix) :] if path.startswith(self.base_prefix) else path
        hit = self.globs.match(rel, is_dir)
        if hit is not None:
            return not hit.negated
        return is_dir or not self.narrows


def _sorted_entries(directory: str, errors: list[str] | None) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        if errors is not None:
            errors.append(f"{directory}: {exc.strerror or exc}")
        return []
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries


def walk_files(
    root: str,
    *,
    tree: IgnoreTree | None = None,
    keep: Filter | None = None,
    stop: Callable[[], bool] | None = None,
    errors: list[str] | None = None,
) -> Iterator[str]:
    """Yield the files below `root` (a real, absolute path) that ripgrep would search."""
    if os.path.isfile(root):
        yield root
        return
    if not os.path.isdir(root):
        return
    tree = tree if tree is not None else IgnoreTree(root)
    yield from _walk(root, tree.chain(root), tree, keep, stop, errors)


def _walk(
    directory: str,
    chain: Chain,
    tree: IgnoreTree,
    keep: Filter | None,
    stop: Callable[[], bool] | None,
    errors: list[str] | None,
) -> Iterator[str]:
    for entry in _sorted_entries(directory, errors):
        if stop is not None and stop():
            return
        if entry.name in SKIPPED_NAMES or entry.is_symlink():
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if not is_dir and not entry.is_file(follow_symlinks=False):
            continue  # sockets, fifos, devices
        if keep is not None and not keep.keeps(entry.path, is_dir):
            continue
        if tree.ignored(entry.path, is_dir, chain):
            continue
        if is_dir:
            yield from _walk(entry.path, tree.chain(entry.path), tree, keep, stop, errors)
        else:
            yield entry.path


class Visibility:
    """Would `walk_files(root, ...)` yield this file? For checking another engine's output."""

    def __init__(self, root: str, tree: IgnoreTree, keep: Filter | None) -> None:
        self.root = root
        self.prefix = root.rstrip("/") + "/"
        self.tree = tree
        self.keep = keep
        self._dirs: dict[str, bool] = {root: True}

    def _dir_visible(self, directory: str) -> bool:
        known = self._dirs.get(directory)
        if known is not None:
            return known
        parent = os.path.dirname(directory)
        visible = (
            self._dir_visible(parent)
            and os.path.basename(directory) not in SKIPPED_NAMES
            and (self.keep is None or self.keep.keeps(directory, True))
            and not self.tree.ignored(directory, True, self.tree.chain(parent))
        )
        self._dirs[directory] = visible
        return visible

    def visible(self, path: str) -> bool:
        if path == self.root:
            return True
        if not path.startswith(self.prefix):
            return False
        parent = os.path.dirname(path)
        return (
            self._dir_visible(parent)
            and (self.keep is None or self.keep.keeps(path, False))
            and not self.tree.ignored(path, False, self.tree.chain(parent))
        )
