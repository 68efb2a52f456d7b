"""Concurrent appends from threads and from processes: no lost and no duplicated seq."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from yagent.memory import SessionStore

from .workers import append_many


def _assert_complete(store: SessionStore, sid: str, workers: int, count: int) -> None:
    messages = store.messages(sid)
    events = store.events(sid)
    total = workers * count
    assert [m["seq"] for m in messages] == list(range(1, total + 1))
    assert [e.seq for e in events] == list(range(1, total + 1))
    for worker in range(workers):
        # Every append is there exactly once, and each writer's own order is kept.
        assert [m["i"] for m in messages if m["worker"] == worker] == list(range(count))
        assert [e.payload["i"] for e in events if e.payload["worker"] == worker] == list(
            range(count)
        )


def test_threads_sharing_one_store_and_threads_with_their_own(db_path: Path):
    workers, count = 6, 40
    with SessionStore(db_path) as shared:
        sid = shared.create_session(workspace="/w").id
        start = threading.Barrier(workers)
        returned: dict[int, list[int]] = {}
        errors: list[BaseException] = []

        def run(worker: int) -> None:
            own = SessionStore(db_path, busy_timeout=30.0) if worker % 2 else None
            store = own or shared
            try:
                start.wait(timeout=30)
                seqs = []
                for index in range(count):
                    seqs.append(store.append_message(sid, {"worker": worker, "i": index}))
                    store.append_event(sid, "tick", {"worker": worker, "i": index})
                returned[worker] = seqs
            except BaseException as exc:  # reported to the main thread below
                errors.append(exc)
            finally:
                if own is not None:
                    own.close()

        threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        _assert_complete(shared, sid, workers, count)
        stored = {m["seq"]: m["worker"] for m in shared.messages(sid)}
        for worker, seqs in returned.items():
            assert all(stored[seq] == worker for seq in seqs)


def test_processes_append_to_one_session(db_path: Path):
    workers, count = 3, 40
    with SessionStore(db_path) as store:
        sid = store.create_session(workspace="/w").id
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(workers)
    results = context.Queue()
    processes = [
        context.Process(target=append_many, args=(str(db_path), sid, worker, count, start, results))
        for worker in range(workers)
    ]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=90) for _ in range(workers)]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0

    with SessionStore(db_path) as store:
        _assert_complete(store, sid, workers, count)
        stored = {m["seq"]: m["worker"] for m in store.messages(sid)}
        events = {e.seq: e.payload["worker"] for e in store.events(sid)}
        own_ids = []
        for worker, own, message_seqs, event_seqs in outcomes:
            assert all(stored[seq] == worker for seq in message_seqs)
            assert all(events[seq] == worker for seq in event_seqs)
            own_ids.append(own)
        assert len(set(own_ids)) == workers
        assert {s.workspace for s in store.list_sessions(limit=None)} >= {
            f"/worker{w}" for w in range(workers)
        }


def test_a_transaction_asked_for_in_a_batch_and_begun_after_it_is_its_own(db_path: Path):
    # What a thread does that finds a batch open and waits for its lock until the batch ended.
    with SessionStore(db_path) as store:
        sid = store.create_session(workspace="/w").id
        with store.batch():
            store.append_event(sid, "in the batch", {})
            late = store._write()
        with late as (conn, _):
            assert conn.in_transaction
            conn.execute("UPDATE sessions SET title = 'late' WHERE id = ?", (sid,))
        assert not conn.in_transaction
        assert store.get_session(sid).title == "late"
        assert [e.type for e in store.events(sid)] == ["in the batch"]
