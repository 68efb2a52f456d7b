"""checkpoint errors: one hierarchy, rooted at `CheckpointError`."""

from __future__ import annotations


class CheckpointError(Exception):
    """Root of every checkpoint error."""


class InvalidArgumentError(CheckpointError, ValueError):
    """A value that can never be valid (empty id, negative seq, a digest on a step not done)."""


class PlanError(InvalidArgumentError):
    """The plan is malformed: duplicate ids, unknown or later dependencies, contradictions."""


class StaleSeqError(CheckpointError):
    """A snapshot was refused: its seq is 0 or not above the stored one. Nothing was written."""

    def __init__(self, run_id: str, seq: int, stored: int | None) -> None:
        why = "seq 0 is not a real commit" if seq == 0 else f"stored seq is {stored}"
        super().__init__(f"checkpoint: snapshot {seq} of run {run_id!r} refused: {why}")
        self.run_id = run_id
        self.seq = seq
        self.stored = stored


class StoreError(CheckpointError):
    """The backend could not run the operation; nothing is known to have changed."""
