"""Dispatcher: the write-through writer (lossless, in publish order, nothing queued but critical
events; a failing writer is detached and the queues take over) and drops counted per type."""

from __future__ import annotations

from yagent.messaging import USER_HELP_NEEDED, USER_HELP_RESPONSE, Dispatcher, Event


def test_a_writer_gets_every_event_in_publish_order_and_nothing_is_dropped() -> None:
    d = Dispatcher(maxsize=2, critical_maxsize=2)
    written: list[str] = []
    d.write_through(lambda e: written.append(e.type))
    sent = ["a", "b", USER_HELP_NEEDED, "c", "d", "e", USER_HELP_RESPONSE, "f"]
    assert all(d.send(Event(kind)) for kind in sent)
    assert written == sent
    assert d.stats.dropped_newest == 0
    assert d.take_drops() == {}
    assert d.stats.written == len(sent)
    # only the critical events wait for the pump (it routes answers); normal ones are not queued
    assert d.pending() == (2, 0)
    assert [d.receive_nowait().type for _ in range(2)] == [USER_HELP_NEEDED, USER_HELP_RESPONSE]  # type: ignore[union-attr]


def test_a_writer_still_writes_after_close() -> None:
    d = Dispatcher()
    written: list[str] = []
    d.write_through(lambda e: written.append(e.type))
    d.close()
    assert d.send(Event("late"))
    assert written == ["late"]
    assert d.take_drops() == {}


def test_a_failing_writer_is_detached_and_the_queue_takes_over() -> None:
    d = Dispatcher(maxsize=1)
    written: list[str] = []

    def writer(event: Event) -> None:
        if event.type == "b":
            raise BrokenPipeError("stdout closed")
        written.append(event.type)

    d.write_through(writer)
    assert d.send(Event("a"))
    assert d.send(Event("b"))  # send never raises: the event is queued instead
    assert not d.writes_through()
    assert "BrokenPipeError: stdout closed" in d.stats.writer_error
    assert not d.send(Event("c"))  # the queue's loss rule again, counted
    assert written == ["a"]
    queued = d.receive_nowait()
    assert queued is not None
    assert queued.type == "b"
    assert d.take_drops() == {"c": 1}


def test_drops_are_counted_per_type_and_taken_once() -> None:
    d = Dispatcher(maxsize=1, critical_maxsize=1)
    d.send(Event("a"))
    for kind in ("tool_result", "tool_result", "tool_call"):
        assert not d.send(Event(kind))
    d.send(Event(USER_HELP_NEEDED))
    d.send(Event(USER_HELP_NEEDED))  # the oldest question is let go
    assert d.take_drops() == {"tool_result": 2, "tool_call": 1, "critical (oldest)": 1}
    assert d.take_drops() == {}
    assert d.stats.dropped_by_type == {"tool_result": 2, "tool_call": 1, "critical (oldest)": 1}
    d.close()
    assert not d.send(Event("after"))
    assert d.take_drops() == {"after": 1}
