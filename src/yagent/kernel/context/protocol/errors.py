"""protocol.errors: the one error hierarchy of the report protocol."""

from __future__ import annotations


class ProtocolError(Exception):
    """Root of the report protocol's errors."""


class NotReportError(ProtocolError, ValueError):
    """The text is not a report: no level of the parser found one. `reasons` says why, per try."""

    def __init__(self, message: str, reasons: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reasons = reasons


class SchemaError(NotReportError):
    """A JSON object was found, but it breaks the report whitelist (`reasons`: each violation)."""
