"""ticket: once only, expiry at consumption, purpose binding, bounded space, randomness failure."""

from __future__ import annotations

import itertools
import secrets
import sys
import threading
from collections.abc import Iterator

import pytest

from yagent.kernel.durable.ticket import (
    ID_BYTES,
    AlreadyConsumedError,
    ExpiredError,
    FullError,
    PurposeError,
    RandomnessError,
    RefusedError,
    Ticket,
    TicketError,
    Tickets,
    UnknownTicketError,
)


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def make(capacity: int = 4, ttl: float = 30.0) -> tuple[Tickets[dict[str, str]], FakeClock]:
    clock = FakeClock()
    return Tickets(clock, ttl, capacity), clock


def test_issue_and_consume_once() -> None:
    tickets, _ = make()
    payload = {"run": "r1"}
    t = tickets.issue("approve", payload)
    assert isinstance(t, Ticket)
    assert (t.purpose, t.issued_at, t.expires_at) == ("approve", 1000.0, 1030.0)
    assert len(t.id) >= 40
    assert tickets.consume(t.id, "approve") is payload
    with pytest.raises(AlreadyConsumedError):
        tickets.consume(t.id, "approve")
    assert len(tickets) == 0


def test_unknown_ticket() -> None:
    tickets, _ = make()
    with pytest.raises(UnknownTicketError):
        tickets.consume("never-issued-xxxxxxxx", "approve")


def test_expiry_is_judged_at_consumption() -> None:
    tickets, clock = make(ttl=10)
    early = tickets.issue("p", {"n": "1"})
    edge = tickets.issue("p", {"n": "2"})
    clock.t += 9.999
    assert tickets.consume(early.id, "p") == {"n": "1"}
    clock.t += 0.001  # exactly expires_at: expired
    with pytest.raises(ExpiredError):
        tickets.consume(edge.id, "p")
    with pytest.raises(AlreadyConsumedError):  # the expired attempt burned it
        tickets.consume(edge.id, "p")


def test_clock_going_forward_between_issue_and_consume_only_matters_at_consume() -> None:
    tickets, clock = make(ttl=5)
    t = tickets.issue("p", {})
    clock.t += 100
    clock.t -= 99  # back within the window when consumption happens
    assert tickets.consume(t.id, "p") == {}


def test_wrong_purpose_fails_and_does_not_burn() -> None:
    tickets, _ = make()
    t = tickets.issue("deploy", {"x": "1"})
    with pytest.raises(PurposeError):
        tickets.consume(t.id, "delete")
    assert tickets.consume(t.id, "deploy") == {"x": "1"}


def test_expired_beats_wrong_purpose() -> None:
    tickets, clock = make(ttl=1)
    t = tickets.issue("deploy", {})
    clock.t += 2
    with pytest.raises(ExpiredError):
        tickets.consume(t.id, "delete")


def test_full_space_refuses_and_purges_expired_first() -> None:
    tickets, clock = make(capacity=2, ttl=10)
    a = tickets.issue("p", {})
    tickets.issue("p", {})
    with pytest.raises(FullError):
        tickets.issue("p", {})
    assert tickets.consume(a.id, "p") == {}  # a refusal evicted nothing
    tickets.issue("p", {})
    clock.t += 10
    fresh = tickets.issue("p", {"new": "1"})  # both old ones expired: purged to make room
    assert len(tickets) == 1
    assert tickets.consume(fresh.id, "p") == {"new": "1"}


def test_purge_reports_what_it_dropped() -> None:
    tickets, clock = make(capacity=3, ttl=10)
    t = tickets.issue("p", {})
    tickets.consume(t.id, "p")
    tickets.issue("p", {})
    clock.t += 5
    tickets.issue("p", {})
    assert tickets.purge() == 0
    clock.t += 5
    assert tickets.purge() == 1
    assert len(tickets) == 1
    with pytest.raises(UnknownTicketError):  # its tombstone expired with it
        tickets.consume(t.id, "p")


def test_tombstones_are_bounded() -> None:
    tickets, _ = make(capacity=2)
    ids = []
    for _ in range(3):
        t = tickets.issue("p", {})
        tickets.consume(t.id, "p")
        ids.append(t.id)
    with pytest.raises(UnknownTicketError):  # oldest tombstone forgotten: still refused
        tickets.consume(ids[0], "p")
    with pytest.raises(AlreadyConsumedError):
        tickets.consume(ids[2], "p")


def test_randomness_failure_is_an_error() -> None:
    def broken(n: int) -> str:
        raise OSError("entropy pool unavailable")

    tickets = Tickets(FakeClock(), 10, 4, rng=broken)
    with pytest.raises(RandomnessError) as info:
        tickets.issue("p", {})
    assert isinstance(info.value.__cause__, OSError)
    assert len(tickets) == 0


@pytest.mark.parametrize("bad", ["", "short", None, 12345678901234567890])
def test_unusable_random_output_is_an_error(bad: object) -> None:
    tickets = Tickets(FakeClock(), 10, 4, rng=lambda n: bad)  # type: ignore[arg-type,return-value]
    with pytest.raises(RandomnessError):
        tickets.issue("p", {})


def test_repeating_randomness_is_an_error_and_never_overwrites() -> None:
    tickets = Tickets(FakeClock(), 10, 4, rng=lambda n: "same-id-every-time-xx")
    first = tickets.issue("p", {"first": "1"})
    with pytest.raises(RandomnessError, match="repeated"):
        tickets.issue("p", {"second": "2"})
    assert tickets.consume(first.id, "p") == {"first": "1"}
    with pytest.raises(RandomnessError):  # a consumed id is still remembered
        tickets.issue("p", {})


def test_rng_is_asked_for_enough_bytes() -> None:
    asked: list[int] = []

    def rng(n: int) -> str:
        asked.append(n)
        return secrets.token_urlsafe(n)

    Tickets(FakeClock(), 10, 4, rng=rng).issue("p", {})
    assert asked == [ID_BYTES]
    assert ID_BYTES >= 16


@pytest.mark.parametrize(("ttl", "capacity"), [(0, 1), (-1, 1), (1, 0)])
def test_bad_configuration(ttl: float, capacity: int) -> None:
    with pytest.raises(ValueError, match="must"):
        Tickets(FakeClock(), ttl, capacity)


def test_purpose_must_be_named() -> None:
    tickets, _ = make()
    with pytest.raises(ValueError, match="purpose"):
        tickets.issue("", {})


def test_error_hierarchy() -> None:
    for err in (UnknownTicketError, AlreadyConsumedError, ExpiredError, PurposeError):
        assert issubclass(err, RefusedError)
    for err in (RefusedError, FullError, RandomnessError):
        assert issubclass(err, TicketError)


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Make threads interleave often, so a missing lock shows up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.mark.usefixtures("busy_switching")
def test_concurrent_consumers_get_the_payload_exactly_once() -> None:
    tickets: Tickets[int] = Tickets(FakeClock(), 10, 1000)
    issued = [tickets.issue("p", i) for i in range(200)]
    got: list[int] = []
    refused = itertools.count()
    lock = threading.Lock()
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait()
        for t in issued:
            try:
                value = tickets.consume(t.id, "p")
            except AlreadyConsumedError:
                next(refused)
                continue
            with lock:
                got.append(value)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(got) == list(range(200))
    assert next(refused) == 600


@pytest.mark.usefixtures("busy_switching")
def test_concurrent_issuers_never_exceed_capacity() -> None:
    tickets: Tickets[int] = Tickets(FakeClock(), 10, 50)
    full = itertools.count()
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait()
        for i in range(30):
            try:
                tickets.issue("p", i)
            except FullError:
                next(full)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(tickets) == 50
    assert next(full) == 70
