"""G8: one stop classifier — the loop's session status, fan-out's receipt and durable's commit
gate all read how a run ended from `app.stopkind.stop_kind`, and agree on every end reason."""

from __future__ import annotations

import inspect

import pytest

from yagent.agents.results import Status
from yagent.app import durable, fanrun, stopkind, turn
from yagent.app.stopkind import StopKind, stop_kind

# Every end reason the loop can report, with what each consumer must make of it.
EXPECTED = {
    # status: (kind, session status, delegation delivered, run concluded)
    Status.FINISHED: (StopKind.DELIVERED, "finished", True, True),
    Status.ANSWERED: (StopKind.DELIVERED, "finished", True, True),
    Status.MAX_STEPS: (StopKind.EXHAUSTED, "finished", False, True),
    Status.ERROR: (StopKind.FAILED, "failed", False, False),
    Status.IDLE_TIMEOUT: (StopKind.TIMED_OUT, "failed", False, False),
    Status.TOTAL_TIMEOUT: (StopKind.TIMED_OUT, "failed", False, False),
    Status.CANCELLED: (StopKind.CANCELLED, "cancelled", False, False),
    Status.PAUSED: (StopKind.PAUSED, "paused", False, False),
}


def test_g8_every_end_reason_is_classified() -> None:
    assert set(EXPECTED) == set(Status), "a new end reason needs its row here and in stopkind"
    for status, (kind, session, delivered, concluded) in EXPECTED.items():
        got = stop_kind(status)
        assert (got, got.session_status, got.delivered, got.concluded) == (
            kind,
            session,
            delivered,
            concluded,
        ), status


@pytest.mark.parametrize("status", list(Status))
def test_g8_consumers_agree_with_the_classifier(status: Status) -> None:
    kind = stop_kind(status)
    # durable: the commit gate's terminal vocabulary is exactly the concluding statuses
    assert (status.value in durable.CONCLUDED) is kind.concluded
    # fan-out's receipts and the loop's session status read the classifier (next test), and a
    # recorded status text classifies exactly as the status itself
    assert stopkind.stop_kind_of(status.value) is kind


def test_g8_no_consumer_keeps_its_own_status_list() -> None:
    """The three former copies (`_DONE`, a literal `CONCLUDED`, `_session_status`'s branches) are
    gone: each consumer's source names the classifier instead of status values."""
    for module in (fanrun, durable, turn):
        source = inspect.getsource(module)
        assert "stopkind" in source, module.__name__
        for literal in ('"answered")', '"max_steps")', "Status.MAX_STEPS"):
            assert literal not in source, (module.__name__, literal)


def test_g8_unknown_status_text_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown run status"):
        stopkind.stop_kind_of("exploded")
    assert stopkind.stop_kind_of("answered") is StopKind.DELIVERED
    assert stopkind.stop_kind_of("", unknown=StopKind.FAILED) is StopKind.FAILED
