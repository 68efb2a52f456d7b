"""The bubblewrap provider's path arguments, checked before any sandbox is built.

Each function takes a path a host handed `BwrapProvider` and returns it in the form the provider
binds, or raises `UnavailableError` naming the path and what is wrong with it: a directory that
must exist (never `/`), a readable path, a proxy directory below the masked `/tmp` or `/run`, a
writable area with no symbolic link anywhere in it and in no protected path, a protected path
relative to the workspace.
`resolver_paths` names what name resolution needs back when `/etc/resolv.conf` lives under the
masked `/run`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from yagent.kernel.confine.sandbox.errors import UnavailableError

_RESOLV = Path("/etc/resolv.conf")
_RUN = Path("/run")


def directory(value: str | os.PathLike[str], what: str) -> Path:
    try:
        path = Path(value).resolve(strict=True)
    except OSError as exc:
        raise UnavailableError(f"{what} {os.fspath(value)!r} does not exist") from exc
    if not path.is_dir():
        raise UnavailableError(f"{what} {str(path)!r} is not a directory")
    if path == Path("/"):
        raise UnavailableError(f"{what} cannot be the root directory: nothing would be read-only")
    return path


def shown(value: str | os.PathLike[str]) -> Path:
    """A readable host path: existing (a file or a directory), taken at its resolved place."""
    try:
        path = Path(value).resolve(strict=True)
    except OSError as exc:
        raise UnavailableError(f"readable path {os.fspath(value)!r} does not exist") from exc
    if path == Path("/"):
        raise UnavailableError("readable path cannot be the root directory")
    return path


def inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def masked_directory(value: str | os.PathLike[str]) -> Path:
    path = directory(value, "proxy directory")
    if not any(path.is_relative_to(m) and path != m for m in (Path("/tmp"), _RUN)):
        raise UnavailableError(
            f"proxy directory {str(path)!r} must lie below /tmp or /run: elsewhere the read-only "
            "root shows its socket to every sandboxed program"
        )
    return path


def area(value: str | os.PathLike[str]) -> Path:
    """A writable path taken literally: absolute, existing, a file or a directory, and with no
    symbolic link anywhere in it (the bind would follow it to a place nobody declared)."""
    path = Path(os.path.abspath(value))
    for step in (path, *path.parents):
        if step.is_symlink():
            raise UnavailableError(
                f"writable path {str(path)!r} goes through the symbolic link {str(step)!r}; "
                "refusing to bind what it points to"
            )
    if not path.exists():
        raise UnavailableError(f"writable path {str(path)!r} does not exist")
    if not (path.is_dir() or path.is_file()):
        raise UnavailableError(f"writable path {str(path)!r} is neither a file nor a directory")
    if path == Path("/"):
        raise UnavailableError("writable path cannot be the root directory")
    return path


def not_protected(
    path: Path, workspace: Path, protected: Iterable[PurePosixPath], names: Iterable[str]
) -> None:
    """Refuse a writable area that is, or lies in, a protected path of the workspace or (inside
    the workspace) an entry named like a protected name, any case: as the deeper bind it would
    make writable what must stay read-only."""
    if not path.is_relative_to(workspace):
        return
    rel = PurePosixPath(path.relative_to(workspace).as_posix())
    folded = {name.casefold() for name in names}
    for root in protected:
        if rel == root or rel.is_relative_to(root):
            raise UnavailableError(
                f"writable path {str(path)!r} lies in the protected {str(root)!r}"
            )
    for part in rel.parts:
        if part.casefold() in folded:
            raise UnavailableError(f"writable path {str(path)!r} lies in a protected {part!r}")


def relative(value: str) -> PurePosixPath:
    rel = PurePosixPath(value)
    if not value or rel.is_absolute() or ".." in rel.parts or rel == PurePosixPath("."):
        raise UnavailableError(
            f"protected path {value!r} must be a plain path inside the workspace"
        )
    return rel


def resolver_paths() -> list[Path]:
    # /run is masked; on hosts where resolv.conf lives there, name resolution needs it back.
    real = _RESOLV.resolve()
    if real != _RESOLV and real.is_relative_to(_RUN) and real.exists():
        return [real]
    return []
