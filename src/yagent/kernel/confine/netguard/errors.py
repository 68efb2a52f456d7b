"""netguard errors: one hierarchy; every refusal says which layer judged and why.

`BlockedError` is what a caller catches to learn "this URL may not be fetched". Its subclass names
the layer (scheme, url syntax, name, resolution, address, peer) and `phase` says whether the
refusal came from the up-front check or from the dial itself. `hop` is set when the refusal came
from a redirect chain. None of these carry anything the URL did not already contain.
"""

from __future__ import annotations

import enum


class Layer(enum.StrEnum):
    SCHEME = "scheme"
    URL = "url"
    NAME = "name"
    RESOLVE = "resolve"
    ADDRESS = "address"
    PEER = "peer"


class Phase(enum.StrEnum):
    CHECK = "check"
    CONNECT = "connect"


class NetguardError(Exception):
    """Root of every error this package raises."""


class PolicyError(NetguardError, ValueError):
    """A policy, pattern or Allow entry that cannot be understood (refused at construction)."""


class StaleGenerationError(NetguardError):
    """compare_and_swap was given a generation that is no longer current."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"policy generation is {actual}, caller expected {expected}")
        self.expected = expected
        self.actual = actual


class BlockedError(NetguardError):
    """The target may not be reached. Subclasses name the layer; `reason` says why."""

    layer: Layer = Layer.URL

    def __init__(
        self,
        reason: str,
        *,
        target: str = "",
        address: str = "",
        phase: Phase = Phase.CHECK,
        hop: int | None = None,
    ) -> None:
        self.reason = reason
        self.target = target
        self.address = address
        self.phase = phase
        self.hop = hop
        super().__init__(reason)

    def __str__(self) -> str:
        where = f" (hop {self.hop})" if self.hop is not None else ""
        at = f" -> {self.address}" if self.address else ""
        return f"netguard {self.phase}/{self.layer}{where}: {self.reason}: {self.target!r}{at}"


class SchemeBlockedError(BlockedError):
    """Not http/https (file:, gopher:, ftp:, ws:, data:, no scheme / relative URL...)."""

    layer = Layer.SCHEME


class URLBlockedError(BlockedError):
    """The URL is malformed or ambiguous (parsers could disagree on its host), so it is refused."""

    layer = Layer.URL


class NameBlockedError(BlockedError):
    """Refused by name before any resolution (localhost, *.internal, metadata, numeric spelling)."""

    layer = Layer.NAME


class ResolveBlockedError(BlockedError):
    """Resolution failed or answered nothing: what cannot be judged is not allowed."""

    layer = Layer.RESOLVE


class AddressBlockedError(BlockedError):
    """An address (literal or resolved) is in a blocked class and no Allow opens it."""

    layer = Layer.ADDRESS


class PeerBlockedError(BlockedError):
    """The connected socket's real peer is not the address that was judged, or is blocked."""

    layer = Layer.PEER
