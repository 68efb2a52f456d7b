"""tooldisclose errors: one hierarchy, so a host can catch the package's refusals as one type."""

from __future__ import annotations


class TooldiscloseError(Exception):
    """Base of every refusal raised by `yagent.kernel.judge.tooldisclose`."""


class InvalidEntryError(TooldiscloseError, ValueError):
    """A tool entry is malformed (empty name, duplicate parameter names, multi-line name…)."""


class DuplicateToolError(TooldiscloseError, ValueError):
    """Two catalog entries share one name: which schema a call means would be a guess."""


class UnknownToolError(TooldiscloseError, KeyError):
    """A name that must be in the catalog (an always-visible tool) is not."""


class CallFormError(TooldiscloseError, ValueError):
    """Positional values that do not fit a call form (too many, a required one missing)."""


class IdentCollisionError(CallFormError):
    """Two names normalise to one program identifier: a call could reach the wrong tool."""


class SnapshotError(TooldiscloseError, ValueError):
    """A disclosure snapshot that cannot be read back (restoring a guess is not restoring)."""
