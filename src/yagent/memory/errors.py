"""The session store's errors: one hierarchy rooted at `SessionStoreError`.

Lookups that find nothing or too much are also `LookupError`s, so a caller that only wants to know
"is there such a session" can catch the builtin. A store that cannot open a file says why (another
program's database, a newer yagent's schema, not a database at all) and never touches that file.
"""

from __future__ import annotations


class SessionStoreError(Exception):
    """Root of this package's errors (bad arguments raise `TypeError` / `ValueError`)."""


class StoreClosedError(SessionStoreError):
    """The store was closed, or is used from a process it was not opened in (after a fork)."""


class StoreBusyError(SessionStoreError):
    """Another connection held the write lock for longer than the busy timeout."""


class SchemaError(SessionStoreError):
    """The file is not a yagent session store this code can use; it was left untouched."""


class DamagedStoreError(SchemaError):
    """The file is empty (truncated), damaged or not a database at all; it was not modified."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"session store {path!r} {why}; it was not modified")
        self.path = path


class StoreUnavailableError(SessionStoreError):
    """The file cannot be opened — permissions, a read-only directory or file system, a missing
    directory: not damage. Nothing was modified; the cause is the `__cause__`."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            f"cannot open session store {path!r} ({why}): check that yagent may read and "
            "write it and its directory (the file was not modified)"
        )
        self.path = path


class StoreFullError(SessionStoreError):
    """The disk holding the store is full: the write did not happen (nothing half-written)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"the disk holding the session store {path!r} is full: free space there and run the "
            "command again (nothing was half-written)"
        )
        self.path = path


class NewerSchemaError(SchemaError):
    """The file was written by a newer yagent (its schema version is above what this code knows)."""

    def __init__(self, path: str, found: int, supported: int) -> None:
        super().__init__(
            f"session store {path!r} has schema version {found}, but this yagent only knows "
            f"versions up to {supported}: upgrade yagent (the file was not modified)"
        )
        self.path = path
        self.found = found
        self.supported = supported


class SessionNotFoundError(SessionStoreError, LookupError):
    """No session has this id (or, for `get_session`, starts with this prefix)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"no session {key!r}")
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])


class AmbiguousSessionError(SessionStoreError, LookupError):
    """A prefix matches several sessions; `candidates` lists (some of) them, oldest first."""

    def __init__(self, prefix: str, candidates: tuple[str, ...], total: int) -> None:
        shown = ", ".join(candidates)
        more = f" and {total - len(candidates)} more" if total > len(candidates) else ""
        super().__init__(f"session prefix {prefix!r} is ambiguous: {shown}{more}")
        self.prefix = prefix
        self.candidates = candidates
        self.total = total

    def __str__(self) -> str:
        return str(self.args[0])


class ToolCallNotFoundError(SessionStoreError, LookupError):
    """A tool result names a call that was never recorded in that session."""

    def __init__(self, session_id: str, call_id: str) -> None:
        super().__init__(f"session {session_id!r} has no recorded tool call {call_id!r}")
        self.session_id = session_id
        self.call_id = call_id

    def __str__(self) -> str:
        return str(self.args[0])


class BatchFailedError(SessionStoreError):
    """A call inside a `batch(whole=True)` failed (its failure is the `__cause__`): the whole batch
    was rolled back, even though the block went on after it."""
