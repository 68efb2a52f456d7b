"""retryplan: three paths from the toolfail table, and no guessing without a key."""

from __future__ import annotations

import pytest

from yagent.kernel.durable import retryplan
from yagent.kernel.durable.retryplan import Path
from yagent.kernel.judge import toolfail

Kind = toolfail.Kind


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("key", [None, "", "   ", "session/1/call-7"])
def test_every_kind_follows_the_table(kind: Kind, key: str | None) -> None:
    got = retryplan.explain(kind, idempotency_key=key)
    has_key = bool(key and key.strip())
    if not toolfail.retryable(kind):
        want = Path.NO_RETRY
    elif toolfail.resend_safe(kind):
        want = Path.RESEND
    else:
        want = Path.REPLAY if has_key else Path.NO_RETRY
    assert got.path is want
    assert retryplan.plan(kind, idempotency_key=key) is want
    assert got.kind is kind
    assert kind.value in got.reason
    assert got.needs_human == toolfail.rule(kind).needs_human
    assert got.idempotency_key == (key if want is Path.REPLAY else None)


def test_timeout_replays_through_the_key_and_never_resends() -> None:
    got = retryplan.explain(Kind.TIMEOUT, idempotency_key="k1")
    assert (got.path, got.idempotency_key) == (Path.REPLAY, "k1")
    assert "cannot apply twice" in got.reason
    assert got.retries


def test_timeout_without_a_key_is_not_retried() -> None:
    got = retryplan.explain(Kind.TIMEOUT, idempotency_key=None)
    assert got.path is Path.NO_RETRY
    assert "not guessing" in got.reason
    assert not got.retries
    assert got.delay(1) == 0.0


def test_refused_before_running_is_resent_with_the_table_backoff() -> None:
    got = retryplan.explain(Kind.RATE_LIMITED, idempotency_key=None)
    assert got.path is Path.RESEND
    assert got.delay(1) == toolfail.rule(Kind.RATE_LIMITED).backoff.delay(1) > 0
    assert got.delay(50) == toolfail.rule(Kind.RATE_LIMITED).backoff.cap


def test_not_worth_retrying_even_with_a_key() -> None:
    got = retryplan.explain(Kind.PERMISSION, idempotency_key="k1")
    assert got.path is Path.NO_RETRY
    assert "not worth retrying" in got.reason


def test_an_unknown_kind_string_is_never_retried() -> None:
    got = retryplan.explain("no-such-kind", idempotency_key="k1")  # type: ignore[arg-type]
    assert (got.path, got.kind) == (Path.NO_RETRY, Kind.UNKNOWN)
