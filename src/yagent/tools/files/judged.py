"""files.judged: act on the path the judgement ring judged — the same object, through descriptors.

Contract:
- `Judged.of(workspace, resolved)` takes the guard's resolution (the ring pins it once per call:
  `WorkspaceGuard.pinned`), so the file the executor uses is the file that was judged, not a
  second resolution of the same text. Inside the workspace it is anchored at the workspace
  directory; outside (a path a person let through), at `/`.
- Every open walks from that anchor with `kernel.confine.beneath`: component by component (one
  `openat2` where the kernel has it), no symbolic link followed. The resolution already followed the
  links that were there when it was judged, so a link met now means the path changed between
  judgement and use: `changed()` turns that into a CONFLICT failure, never an act somewhere else.
- A path no system takes — longer than `PATH_MAX` bytes, or one name longer than `NAME_MAX` — is
  the caller's bad argument (`Judged.of` raises INVALID_ARGS, saying which limit) before anything
  acts: a write used to create every directory of a 3 000-deep path before the name failed.
- Reads, writes, renames and listings then go through the descriptors (`dir_fd=`, `scandir(fd)`).
Left to the caller: what the failure says for its own tool, and closing what it opened through
the context managers here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from yagent.kernel.confine import beneath
from yagent.kernel.confine.beneath import NAME_MAX, PATH_MAX
from yagent.kernel.judge.toolfail import Kind, ToolFailure

_ANCHOR_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)


@dataclass(frozen=True, slots=True)
class Judged:
    resolved: Path  # absolute and normalised, as judged
    anchor: str  # the workspace when the path is inside it, otherwise "/"
    parts: tuple[str, ...]  # the components beneath the anchor

    @classmethod
    def of(cls, workspace: Path, resolved: str | Path) -> Judged:
        # String work, not pathlib: this runs on every file call (see bench/bench_fdwalk.py).
        text, base = str(resolved), str(workspace)
        _within_limits(text)
        if text == base:
            return cls(Path(text), base, ())
        if text.startswith(base.rstrip("/") + "/"):
            rest, anchor = text[len(base.rstrip("/")) + 1 :], base
        else:
            rest, anchor = text.lstrip("/"), "/"
        return cls(Path(text), anchor, tuple(p for p in rest.split("/") if p not in ("", ".")))

    def below(self, *names: str) -> Judged:
        """A path under this one (names from a walk of it), anchored the same way."""
        return Judged(self.resolved.joinpath(*names), self.anchor, (*self.parts, *names))


def _within_limits(path: str) -> None:
    """Refuse a path the system cannot take (see the module contract), before anything acts."""
    size = len(os.fsencode(path))
    if size >= PATH_MAX:
        raise ToolFailure(
            Kind.INVALID_ARGS,
            f"the path is {size} bytes long; the system takes at most {PATH_MAX - 1} "
            f"(it starts {path[:80]!r})",
        )
    longest = max((len(os.fsencode(p)) for p in path.split("/")), default=0)
    if longest > NAME_MAX:
        raise ToolFailure(
            Kind.INVALID_ARGS,
            f"a name in the path is {longest} bytes long; the system takes at most {NAME_MAX} "
            f"per name (the path starts {path[:80]!r})",
        )


@contextlib.contextmanager
def anchor(judged: Judged) -> Iterator[int]:
    fd = os.open(judged.anchor, _ANCHOR_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def open_fd(judged: Judged, flags: int, mode: int = 0o666) -> int:
    """A descriptor for the judged path itself (the caller owns it)."""
    with anchor(judged) as root:
        return beneath.open_beneath(root, judged.parts, flags, mode)


@contextlib.contextmanager
def parent(judged: Judged, *, make: bool = False) -> Iterator[tuple[int, str]]:
    """The directory holding the judged path, opened beneath the anchor, and the last name.
    `make` creates missing directories on the way (each one opened without following)."""
    if not judged.parts:
        raise IsADirectoryError(0, "is a directory", str(judged.resolved))
    with anchor(judged) as root:
        fd = beneath.open_parent(root, judged.parts, make=make)
    try:
        yield fd, judged.parts[-1]
    finally:
        os.close(fd)


def changed(given: str, exc: beneath.SymlinkMetError, acted: str) -> ToolFailure:
    """The failure for a path that is not what was judged any more (`acted`: what did not
    happen, e.g. "nothing was written")."""
    return ToolFailure(
        Kind.CONFLICT,
        f"{given} changed between the check and the use: {exc.filename!r} on its way is now a "
        f"symbolic link, which is not followed; {acted}. If the link is meant, name its target",
    )
