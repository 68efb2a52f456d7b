"""beneath: open a path beneath an open directory, following no symbolic link on the way.

The host judges a path once (resolved, normalised), then uses it through this module, so what it
acts on is what it judged: every component is opened relative to the file descriptor of the one
before it, and a symbolic link met anywhere — final component included — is refused
(`SymlinkMetError`), never followed. A path whose directories were swapped for links between the
judgement and the use therefore fails; it never leads somewhere else.

Guarantees:
- `open_beneath(dir_fd, parts, flags)` opens `parts` (already-normalised names: no `..`, `.`,
  empty names or separators — those are a `ValueError`) beneath `dir_fd` and returns a new
  close-on-exec descriptor the caller owns. On Linux it is one `openat2` system call with
  `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (called through `ctypes`);
  where the kernel lacks `openat2` (ENOSYS, or a seccomp EPERM), a portable walk does the same
  with `openat(..., O_NOFOLLOW)` component by component and checks each is a directory.
- `open_parent(dir_fd, parts, make=True)` opens the directory holding the last component,
  creating missing directories one `mkdirat` at a time (each then opened without following).
- Errors are `OSError`s with the usual errno (ENOENT, ENOTDIR, EISDIR…); a symbolic link met is
  `SymlinkMetError` (errno ELOOP) naming the component.
Left to the host: what to judge, where the anchor descriptor comes from, and what to do with a
refusal. Reads, writes and renames go through the descriptors (`dir_fd=`) — this module only opens.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections.abc import Sequence

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (new-style syscall table)
PATH_MAX = 4096  # Linux: bytes of a path with its NUL; a longer one is refused by every call
NAME_MAX = 255  # bytes of one name on Linux filesystems
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
_DIR_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)

USE_OPENAT2 = True
"""Seam: False forces the portable walk (tests run both; a kernel without openat2 sets it)."""


class SymlinkMetError(OSError):
    """A symbolic link where the path named a plain component: nothing was followed."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_HOW_SIZE = ctypes.sizeof(_OpenHow)
_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes.CDLL | None:
    global _libc, USE_OPENAT2
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            USE_OPENAT2 = False
            return None
        _libc.syscall.restype = ctypes.c_long
        _libc.syscall.argtypes = [
            ctypes.c_long,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_size_t,
        ]
    return _libc


def check_parts(parts: Sequence[str]) -> None:
    for part in parts:
        if part in ("", ".", "..") or "/" in part or "\0" in part:
            raise ValueError(f"beneath: {part!r} is not a plain path component")


def _symlink(name: str) -> SymlinkMetError:
    return SymlinkMetError(errno.ELOOP, "a symbolic link is in the way (not followed)", name)


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """The descriptor, or None when this kernel has no usable openat2 (then the walk runs)."""
    global USE_OPENAT2
    libc = _syscall()
    if libc is None:
        return None
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = libc.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(rel), ctypes.byref(how), _HOW_SIZE)
    if fd >= 0:
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM):
        USE_OPENAT2 = False
        return None
    if err in (errno.ELOOP, errno.EXDEV):
        raise _symlink(rel)
    raise OSError(err, os.strerror(err), rel)  # the subclass for errno (FileNotFoundError…)


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _step(dir_fd: int, name: str) -> int:
    """One directory component beneath `dir_fd`, never through a link."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        # O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a link (ELOOP without O_PATH): name which.
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(dir_fd, name)):
            raise _symlink(name) from None
        raise
    return fd  # O_DIRECTORY: the kernel refused anything but a directory (a link included)


def _walk(dir_fd: int, parts: Sequence[str], flags: int, mode: int) -> int:
    current = dir_fd
    try:
        for name in parts[:-1]:
            nxt = _step(current, name)
            if current != dir_fd:
                os.close(current)
            current = nxt
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=current)
        except OSError as exc:
            last = parts[-1]
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(current, last)):
                raise _symlink(last) from None
            raise
    finally:
        if current != dir_fd:
            os.close(current)


def open_beneath(dir_fd: int, parts: Sequence[str], flags: int, mode: int = 0o666) -> int:
    """A new descriptor for `parts` beneath `dir_fd`, no link followed (see the module doc)."""
    check_parts(parts)
    if not parts:
        return os.open(".", flags | os.O_CLOEXEC, dir_fd=dir_fd)
    if USE_OPENAT2:
        try:
            fd = _openat2(dir_fd, "/".join(parts), flags, mode)
        except NotADirectoryError:
            fd = None  # a file — or a link opened with O_DIRECTORY: the walk tells which
        if fd is not None:
            return fd
    return _walk(dir_fd, parts, flags, mode)


def open_parent(dir_fd: int, parts: Sequence[str], *, make: bool = False) -> int:
    """The directory holding `parts[-1]` (a descriptor usable as `dir_fd`), missing ones made
    when `make` — each made directory is opened without following, like every other."""
    check_parts(parts)
    if not parts:
        raise ValueError("beneath: an empty path has no parent")
    parents = parts[:-1]
    if not make:
        return open_beneath(dir_fd, parents, _DIR_FLAGS)
    current = os.dup(dir_fd)
    try:
        for name in parents:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=current)
            nxt = _step(current, name)
            os.close(current)
            current = nxt
        result, current = current, -1
        return result
    finally:
        if current >= 0:
            os.close(current)
