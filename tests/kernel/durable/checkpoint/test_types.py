"""RunProgress and step record validation, the digest, and the one storage encoding."""

from __future__ import annotations

import pytest

from yagent.kernel.durable.checkpoint import (
    InvalidArgumentError,
    RunProgress,
    RunState,
    StepRecord,
    StepStatus,
    digest,
)
from yagent.kernel.durable.checkpoint.types import decode, encode


def test_digest_is_a_labelled_sha256_of_bytes_only() -> None:
    assert digest(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert digest(b"a") != digest(b"b")
    with pytest.raises(InvalidArgumentError):
        digest("text")  # type: ignore[arg-type]


def test_a_completed_step_carries_a_digest_and_only_it_does() -> None:
    assert StepRecord("a", StepStatus.COMPLETED, "sha256:x").digest == "sha256:x"
    with pytest.raises(InvalidArgumentError, match="digest goes with COMPLETED"):
        StepRecord("a", StepStatus.COMPLETED)
    with pytest.raises(InvalidArgumentError, match="digest goes with COMPLETED"):
        StepRecord("a", StepStatus.FAILED, "sha256:x")


@pytest.mark.parametrize(
    "args",
    [
        ("", StepStatus.PENDING),
        ("a", "completed"),
        ("a", StepStatus.PENDING, 1),
        ("a", StepStatus.PENDING, "", None),
    ],
)
def test_malformed_step_records_are_refused(args: tuple[object, ...]) -> None:
    with pytest.raises(InvalidArgumentError):
        StepRecord(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [
        ("", 1, RunState.ACTIVE),
        ("r", -1, RunState.ACTIVE),
        ("r", True, RunState.ACTIVE),
        ("r", 1.0, RunState.ACTIVE),
        ("r", 1, "active"),
        ("r", 1, RunState.ACTIVE, ("not a record",)),
        ("r", 1, RunState.ACTIVE, (StepRecord("a", StepStatus.PENDING),) * 2),
    ],
)
def test_malformed_snapshots_are_refused(args: tuple[object, ...]) -> None:
    with pytest.raises(InvalidArgumentError):
        RunProgress(*args)  # type: ignore[arg-type]


def test_snapshot_seq_zero_is_a_value_and_steps_become_a_tuple() -> None:
    snap = RunProgress("r", 0, RunState.ACTIVE, [StepRecord("a", StepStatus.PENDING)])  # type: ignore[arg-type]
    assert snap.steps == (StepRecord("a", StepStatus.PENDING),)
    assert snap.step("a") == StepRecord("a", StepStatus.PENDING)
    assert snap.step("b") is None


def test_terminal_states_are_everything_but_active() -> None:
    assert [s for s in RunState if s.terminal] == [
        RunState.SUCCEEDED,
        RunState.FAILED,
        RunState.CANCELLED,
    ]


def test_encoding_round_trips_and_decoding_refuses_the_odd() -> None:
    snap = RunProgress(
        "r",
        2,
        RunState.ACTIVE,
        (
            StepRecord("a", StepStatus.COMPLETED, digest(b"x"), "ünï"),
            StepRecord("b", StepStatus.RUNNING),
        ),
    )
    assert decode("r", 2, "active", encode(snap)) == snap
    for bad in (
        '{"a": 1}',
        '[["a", "completed", ""]]',
        '[["a", "weird", "", ""]]',
        "[1]",
        "not json",
    ):
        with pytest.raises(ValueError, match=r"checkpoint|Expecting value|not a valid"):
            decode("r", 2, "active", bad)
    with pytest.raises(ValueError, match="not a valid RunState"):
        decode("r", 2, "paused", "[]")
