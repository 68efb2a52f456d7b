"""The refusals of `yagent.kernel.trace.trajectory`, in one hierarchy."""

from __future__ import annotations


class TrajectoryError(Exception):
    """Root of this package's errors."""


class VocabularyError(TrajectoryError, ValueError):
    """A host vocabulary rule cannot be applied as written (missing row reference, a type both
    mapped and ignored, …): refused when the rule is built, not discovered mid-stream."""


class OtelMapError(TrajectoryError):
    """The OpenTelemetry mapping contract was broken."""


class UnknownAttributeError(OtelMapError, KeyError):
    """An attribute name the mapping contract does not declare."""


class LabelPolicyError(OtelMapError, ValueError):
    """An attribute declared as a metric label that may not be one (unbounded, free text, or on
    the forbidden list)."""
