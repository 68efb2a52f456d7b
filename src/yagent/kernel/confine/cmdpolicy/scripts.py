"""Script files a line runs, read from the disk so their lines are judged as if typed; and the
commands that may change what a later command of the same line names (its directory, a link).

Guarantees:
- `read(word, where, direct)` gives the text of the script file `word` names — run by a shell
  (`bash x.sh`, `sh x.sh`), sourced (`. x.sh`, `source x.sh`) or, `direct`, executed by its
  path (`./x.sh`) — placed where `where` says (relative to the working directory, `~` at the
  home). It reads at most `MAX_SCRIPT_BYTES` + 1 bytes of a regular file opened without
  blocking (a FIFO or a device is never waited on). The answer is a `Script`: its text; or why
  it cannot be read (missing, not a regular file, over the size cap, not UTF-8, a relative path
  on a line that may change directory) — a run-time fact the host must not auto-approve; or,
  for a `direct` run of a file whose `#!` names a program that is not a shell (`python3`,
  `node`), of a binary, or of a file outside the workspace (an installed program: `/usr/bin/x`,
  a virtualenv's `python`), nothing: what such a program does is out of cmdpolicy's reach, as
  `python3 x.py` is.
- Only a script inside the working directory the host gave (the workspace, links resolved) that
  the host's `Where.readable` allows is read: its commands appear in the verdict, so a file
  elsewhere or hidden from tools (a secret) is never read — it is unreadable, a run-time fact.
- `placed(value, where)` is the absolute lexical path a word names (None: not known here), for
  telling whether another command of the line names the same file (it may write it first).
- `rewritten(files, words, targets, where)`: the script files read (each with the index of the
  command that runs it) that another command of the line names — but for commands that only read
  (`cat`, `grep`…), other runs of a script and the wrappers of the runner — or a redirection
  writes: that command may write the file before it runs, so what was read is not what runs.
- `moves(args)`: whether a command may change the directory later commands run in (`cd`,
  `pushd`, `popd`, `env -C`, or a command name only run time knows).
- `makes_links(args)`: whether a command may make or re-point a symbolic link, or replace a
  file, before a later command runs — `ln`, `cp`, `mv`, `rsync`, `install`, archive
  extractors, `git` commands that write the work tree, or a command name only run time knows.
Reads only the file named, only when the host asked (`Where.disk`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy.model import Arg, basename
from yagent.kernel.confine.cmdpolicy.operands import Where
from yagent.kernel.confine.cmdpolicy.wrappers import SHELLS

MAX_SCRIPT_BYTES = 64 * 1024
LINK_MAKERS = frozenset(
    {"ln", "cp", "mv", "rsync", "install", "tar", "bsdtar", "unzip", "cpio", "link", "busybox"}
)
GIT_WRITERS = frozenset(
    {
        "clone", "checkout", "switch", "restore", "reset", "merge", "pull", "rebase", "stash",
        "apply", "am", "cherry-pick", "revert", "worktree", "submodule", "read-tree",
        "checkout-index", "mv",
    }
)  # fmt: skip
# commands that only read the files they name: naming a script does not write it
_READERS = frozenset({"cat", "head", "tail", "less", "more", "wc", "ls", "grep", "file", "stat"})
_MOVERS = frozenset({"cd", "pushd", "popd", "chdir"})
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Script:
    """A script file as read: its text, or why it cannot be read ("" when it could)."""

    path: str
    text: str | None = None
    unreadable: str = ""


def placed(value: str | None, where: Where) -> str | None:
    """The absolute lexical path `value` names where the line runs (None: not known here)."""
    if not value:
        return None
    if value == "~" or value.startswith("~/"):
        base = where.home
        value = value[1:].lstrip("/")
    elif value.startswith("/"):
        base = "/"
    else:
        base = None if where.moved else where.cwd
    return None if base is None else os.path.normpath(os.path.join(base, value))


def read(word: Arg, where: Where, direct: bool) -> Script | None:
    """The script file `word` names, as read now (see the module contract)."""
    path = placed(word.value, where)
    if path is None:
        why = "its place is known only at run time (the line may change directory)"
        return Script(word.source, unreadable=why)
    real = os.path.realpath(path)
    if direct and not _inside(real, where):
        return None  # a program installed elsewhere (`/usr/bin/x`, a venv's python): its own
    if not _may_read(real, where):
        why = "it lies outside the workspace or is hidden: cmdpolicy reads no script there"
        return Script(path, unreadable=why)
    try:
        fd = os.open(real, _OPEN | os.O_NOFOLLOW)
    except OSError as exc:
        return Script(path, unreadable=exc.strerror or "cannot open it")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Script(path, unreadable="not a regular file")
        data = os.read(fd, MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        return Script(path, unreadable=exc.strerror or "cannot read it")
    finally:
        os.close(fd)
    if len(data) > MAX_SCRIPT_BYTES:
        return Script(path, unreadable=f"over the {MAX_SCRIPT_BYTES}-byte cap for a script")
    if direct and not _shell_script(data):
        return None
    try:
        return Script(path, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return Script(path, unreadable="not UTF-8 text")


def _inside(real: str, where: Where) -> bool:
    """Whether the resolved path lies in the working directory the host gave (the workspace)."""
    if where.cwd is None:
        return False
    root = os.path.realpath(where.cwd)
    return real == root or real.startswith(root.rstrip("/") + "/")


def _may_read(real: str, where: Where) -> bool:
    """A script cmdpolicy may read (and so show in its verdict): in the workspace, and readable
    by the host's word (not hidden from tools)."""
    return _inside(real, where) and (where.readable is None or where.readable(real))


def _shell_script(data: bytes) -> bool:
    """Whether a file run by its path is shell code: a `#!` naming a shell (directly or through
    `env`), or no `#!` in a text file (the shell runs it itself)."""
    if b"\0" in data[:4096]:
        return False
    if not data.startswith(b"#!"):
        return True
    words = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if words and basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and basename(words[0]) in SHELLS


def moves(args: tuple[Arg, ...]) -> bool:
    """A command that may change the directory later commands run in (or may be one)."""
    heads = {f.static for f in args[0].expanded} if args else set()
    if None in heads or any(basename(h) in _MOVERS for h in heads if h):
        return True
    if any(h and basename(h) == "env" for h in heads):
        return any(
            a.value is None or a.value.startswith(("-C", "--chdir")) or a.value == "--ch"
            for a in args[1:]
        )
    return False


def makes_links(args: tuple[Arg, ...]) -> bool:
    """Whether this command may make or re-point a link before a later one runs (contract)."""
    if not args or args[0].value is None:
        return True
    names = {basename(a.value) for a in args if a.value}
    return bool(names & LINK_MAKERS) or ("git" in names and bool(names & GIT_WRITERS))


def rewritten(
    files: Sequence[tuple[str, int]],
    words: Sequence[tuple[Arg, ...]],
    targets: Sequence[Arg],
    where: Where,
) -> list[str]:
    """The script files another command of the line may write first (see the module contract)."""
    found: list[str] = []
    runners = {i for _, i in files}
    for path, runner in files:
        own = words[runner]
        named = [*targets]
        for i, args in enumerate(words):
            head = args[0].value if args else None
            reads = head is not None and basename(head) in _READERS
            if i not in runners and args[-len(own) :] != own and not reads:
                named.extend(args)
        if any(placed(a.value, where) == path for a in named):
            found.append(path)
    return found
