"""chmod MODEs by what they do: every spelling of the same change of permission bits is one mode.

Guarantees:
- `effect(mode)` reads a numeric (`777`, `0777`) or symbolic (`a+rwx`, `u=rwx,go=rwx`, `o+w`,
  `+w`, `ug+s,o-t`) MODE into the bits it surely sets and the bits it surely clears, whatever the
  file's bits were: twelve bits (set-user-ID, set-group-ID, sticky, and read/write/execute for
  user, group, others). A clause without a `who` counts as `a` (the umask it would respect is
  the running process's, unknown here: read as the widest). `X` and copied permissions (`g=u`)
  set and clear nothing surely. None when the text is not a MODE.
- `covers(have, want)` is True when the mode `have` surely does at least what `want` surely
  does: it sets every bit `want` sets and clears every bit `want` clears (`a+rwx`, `0777`,
  `u=rwx,go=rwx` cover `777`; `777`, `a+w`, `o=rwx` cover `o+w`). Two texts that are not MODEs
  cover each other only when equal.
Reads nothing; refuses nothing.
"""

from __future__ import annotations

import re

_CLAUSE = re.compile(r"([ugoa]*)((?:[-+=](?:[rwxXst]*|[ugo]))+)\Z")
_ACTION = re.compile(r"([-+=])([ugo]|[rwxXst]*)")
_WHO = {"u": 0o4700, "g": 0o2070, "o": 0o1007}  # each class's bits (sticky counted with others)
_PERM = {"r": 0o444, "w": 0o222, "x": 0o111, "s": 0o6000, "t": 0o1000}


def effect(mode: str) -> tuple[int, int] | None:
    """(bits surely set, bits surely cleared) by `mode`, or None (see the module contract)."""
    if mode.isdigit():
        if set(mode) - set("01234567") or int(mode, 8) > 0o7777:
            return None
        value = int(mode, 8)
        return value, 0o777 & ~value
    sets = clears = 0
    for clause in mode.split(","):
        found = _CLAUSE.match(clause)
        if found is None:
            return None
        who = 0
        for letter in found.group(1) or "a":
            who |= 0o7777 if letter == "a" else _WHO[letter]
        for op, perms in _ACTION.findall(found.group(2)):
            bits = 0
            for letter in perms:
                bits |= _PERM.get(letter, 0)
            bits &= who
            copied = perms in ("u", "g", "o")
            if op == "=":
                plain = who & 0o777  # `=` leaves set-ID bits of directories as they were
                sets &= ~plain
                clears &= ~plain
                if not copied:
                    clears |= plain & ~bits
            if copied:  # `g=u`: whatever the user's bits were — nothing sure
                sets &= ~who
                clears &= ~who
            elif op == "-":
                clears |= bits
                sets &= ~bits
            else:
                sets |= bits
                clears &= ~bits
    return sets, clears


def covers(have: str, want: str) -> bool:
    """Whether the mode `have` surely does at least what `want` does (see the module contract)."""
    mine, theirs = effect(have), effect(want)
    if mine is None or theirs is None:
        return have == want
    return mine[0] & theirs[0] == theirs[0] and mine[1] & theirs[1] == theirs[1]
