"""Seqs remembered between transactions: one writer reads each table's last seq once, and a
second writer (another connection, another process) is noticed and read again — never a
duplicate, never a gap, never another writer's record reordered."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from yagent.memory import SessionStore, ToolCallNotFoundError

from .workers import append_many


def _statements(store: SessionStore) -> list[str]:
    seen: list[str] = []
    store._live().set_trace_callback(seen.append)
    return seen


def _max_reads(seen: list[str]) -> list[str]:
    return [sql for sql in seen if "MAX(seq)" in sql]


def test_a_writer_reads_each_tables_last_seq_once_not_once_per_transaction(
    store: SessionStore, sid: str
):
    store.append_event(sid, "first", {})
    store.append_message(sid, {"role": "user", "content": "m"})
    seen = _statements(store)
    for n in range(5):
        with store.batch(whole=True):
            store.append_event(sid, f"e{n}", {})
            store.append_message(sid, {"role": "user", "content": f"m{n}"})
        store.append_event(sid, f"alone{n}", {})
    assert _max_reads(seen) == []
    assert [e.seq for e in store.events(sid)] == list(range(1, 12))
    assert [m["seq"] for m in store.messages(sid)] == list(range(1, 7))


def _other_writer(db_path: Path, sid: str, start: int, count: int) -> None:
    with SessionStore(db_path) as other:
        for i in range(start, start + count):
            other.append_event(sid, "other", {"i": i})
            other.append_message(sid, {"role": "user", "content": f"other {i}"})


def test_a_second_connection_writing_between_two_transactions_is_read_again(
    store: SessionStore, sid: str, db_path: Path
):
    for round_ in range(3):
        with store.batch(whole=True):
            store.append_event(sid, "mine", {"round": round_})
            store.append_message(sid, {"role": "user", "content": f"mine {round_}"})
        _other_writer(db_path, sid, round_ * 2, 2)
        store.append_event(sid, "mine", {"round": round_, "alone": True})
    events = store.events(sid)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.type for e in events] == ["mine", "other", "other", "mine"] * 3
    assert [e.payload["i"] for e in events if e.type == "other"] == list(range(6))
    messages = store.messages(sid)
    assert [m["seq"] for m in messages] == list(range(1, 10))


def test_a_second_process_writing_between_two_transactions_is_read_again(
    store: SessionStore, sid: str, db_path: Path
):
    context = multiprocessing.get_context("spawn")
    for round_ in range(2):
        with store.batch(whole=True):
            store.append_event(sid, "mine", {"round": round_})
            store.append_message(sid, {"role": "user", "content": f"mine {round_}"})
        start, results = context.Barrier(1), context.Queue()
        process = context.Process(
            target=append_many, args=(str(db_path), sid, round_, 3, start, results)
        )
        process.start()
        worker, _, message_seqs, event_seqs = results.get(timeout=90)
        process.join(timeout=30)
        assert process.exitcode == 0
        assert worker == round_
        base = round_ * 5
        assert event_seqs == [base + 2, base + 3, base + 4]
        assert message_seqs == event_seqs
        store.append_event(sid, "mine", {"after": round_})
        store.append_message(sid, {"role": "user", "content": f"after {round_}"})
    events = store.events(sid)
    assert [e.seq for e in events] == list(range(1, 11))
    assert [e.type for e in events] == ["mine", "tick", "tick", "tick", "mine"] * 2
    assert [m["seq"] for m in store.messages(sid)] == list(range(1, 11))


def test_seqs_taken_by_a_transaction_that_rolled_back_are_taken_again(
    store: SessionStore, sid: str
):
    store.append_event(sid, "one", {})

    def whole_batch_failing() -> None:
        with store.batch(whole=True):
            store.append_event(sid, "rolled back", {})
            store.append_message(sid, {"role": "user", "content": "rolled back"})
            store.record_tool_result(sid, "nope", content="", ok=True, kind=None, ended_at=1.0)

    def batch_raising() -> None:
        with store.batch():
            store.append_event(sid, "rolled back too", {})
            raise RuntimeError("the step failed")

    with pytest.raises(ToolCallNotFoundError):
        whole_batch_failing()
    with pytest.raises(RuntimeError):
        batch_raising()
    store.append_event(sid, "two", {})
    store.append_message(sid, {"role": "user", "content": "kept"})
    assert [(e.seq, e.type) for e in store.events(sid)] == [(1, "one"), (2, "two")]
    assert [m["seq"] for m in store.messages(sid)] == [1]


def test_a_failed_commit_forgets_the_seqs_it_took(
    store: SessionStore, sid: str, monkeypatch: pytest.MonkeyPatch
):
    from yagent.kernel.durable import sqlitedb

    store.append_event(sid, "one", {})
    real = sqlitedb._Committed.__exit__

    def failing_exit(self: sqlitedb._Committed, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            sqlitedb._rollback(self._conn)
            raise sqlitedb.sqlite3.OperationalError("disk I/O error")
        real(self, exc_type, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlitedb._Committed, "__exit__", failing_exit)
    with pytest.raises(Exception, match="disk I/O error"):
        store.append_event(sid, "lost", {})
    monkeypatch.setattr(sqlitedb._Committed, "__exit__", real)
    store.append_event(sid, "two", {})
    assert [(e.seq, e.type) for e in store.events(sid)] == [(1, "one"), (2, "two")]
