"""sideeffect errors: one hierarchy, rooted at `SideEffectError`.

Contract: normal contention is never an exception (it is an `Outcome`); these are raised for a
lease that no longer confers the right it claims (`LeaseError` and its two causes), for arguments
that can never be valid (`InvalidArgumentError`), for a downstream refusing a stale fence
(`StaleFenceError`) and for a backend that could not run the operation at all (`StoreError`).
A `StoreError` means nothing is known to have changed: the operation's transaction did not commit.
"""

from __future__ import annotations


class SideEffectError(Exception):
    """Root of every sideeffect error."""


class InvalidArgumentError(SideEffectError, ValueError):
    """An argument that can never be valid (empty key, non-positive ttl, non-bytes result)."""


class LeaseError(SideEffectError):
    """The lease no longer entitles its holder to the operation it asked for."""


class StaleLeaseError(LeaseError):
    """A newer attempt exists, the gate changed hands or was released, or the intent is gone."""


class LeaseExpiredError(LeaseError):
    """The lease is still the newest one, but its time ran out: an expired holder holds nothing."""


class StaleFenceError(SideEffectError):
    """A downstream refused a write carrying a fence older than one it already accepted."""

    def __init__(self, resource: str, fence: int, high_water: int) -> None:
        super().__init__(
            f"stale fence {fence} for resource {resource!r}: fence {high_water} already accepted"
        )
        self.resource = resource
        self.fence = fence
        self.high_water = high_water


class StoreError(SideEffectError):
    """The backend could not run the operation (locked past its busy timeout, corrupt, closed)."""
