"""Sandbox vocabulary: isolation levels and egress modes, both ordered, zero value the weakest.

`Level` says how strongly a backend isolates a program from the host; `EgressMode` says how
strictly outbound network traffic is held. Both are integers so they compare, and both start at
the weakest member: a backend that forgets to declare something lands on the weak side, never the
strong one. The egress vocabulary lives here (not in `egress`) so that a backend can declare what
it enforces without importing the policy package that judges it.
"""

from __future__ import annotations

import enum
from typing import Protocol, runtime_checkable


class Level(enum.IntEnum):
    """Isolation strength, weakest first."""

    IN_PROCESS = 0
    """No OS isolation: an in-process interpreter, or a plain child process of the host."""
    NAMESPACES = 1
    """Kernel namespaces: own mount, pid, network… views of the host kernel (bubblewrap)."""
    HARDWARE = 2
    """Hardware virtualisation: a separate kernel (a micro-VM)."""

    @classmethod
    def parse(cls, value: object) -> Level:
        """A level from its name (`"namespaces"`, any case) or its number; anything else raises."""
        if isinstance(value, Level):
            return value
        if isinstance(value, str) and value.strip().upper().replace("-", "_") in cls.__members__:
            return cls[value.strip().upper().replace("-", "_")]
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and value in cls._value2member_map_
        ):
            return cls(value)
        raise ValueError(f"unknown sandbox level {value!r}; known: {[m.name.lower() for m in cls]}")


class EgressMode(enum.IntEnum):
    """How strictly outbound traffic is held, loosest first."""

    UNRESTRICTED = 0
    """Any destination, directly."""
    PROXY = 1
    """Only through a proxy that judges destinations (direct traffic only to the bypass list)."""
    DENIED = 2
    """No outbound traffic at all."""

    @classmethod
    def parse(cls, value: object) -> EgressMode:
        """A mode from its name (any case) or its number; anything else raises."""
        if isinstance(value, EgressMode):
            return value
        if isinstance(value, str) and value.strip().upper() in cls.__members__:
            return cls[value.strip().upper()]
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and value in cls._value2member_map_
        ):
            return cls(value)
        raise ValueError(f"unknown egress mode {value!r}; known: {[m.name.lower() for m in cls]}")


@runtime_checkable
class EgressEnforcer(Protocol):
    """A backend that says it enforces an egress mode by itself (a claim, not a proof).

    `egress()` returns the strictest mode it holds; a stricter mode also satisfies looser
    requirements. A backend that does not implement this is taken to enforce nothing
    (`UNRESTRICTED`).
    """

    def egress(self) -> EgressMode: ...


def egress_of(backend: object) -> EgressMode:
    """What `backend` claims to enforce; silence is the weakest mode."""
    if not isinstance(backend, EgressEnforcer):
        return EgressMode.UNRESTRICTED
    try:
        return EgressMode(backend.egress())
    except Exception:  # a claim that cannot be read is no claim: the weakest mode
        return EgressMode.UNRESTRICTED
