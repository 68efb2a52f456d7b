"""The session store's own tests (sessions, conversation log, ledger) run again on PostgreSQL:
the same test functions, with the `store` fixture opening a `PgSessionStore` on a fresh database
of the test cluster (tests.pg) instead of an SQLite file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.memory import test_ledger, test_log, test_sessions
from tests.memory.conftest import FakeClock
from yagent.memory.pgstore import PgSessionStore


@pytest.fixture
def store(pg_url: str, clock: FakeClock) -> Iterator[PgSessionStore]:
    with PgSessionStore(pg_url, clock=clock) as opened:
        yield opened


for _module in (test_sessions, test_log, test_ledger):
    for _name in dir(_module):
        if _name.startswith("test_"):
            globals()[f"{_name}"] = getattr(_module, _name)


def test_a_deflated_record_round_trips_through_its_text_column(
    store: PgSessionStore, pg_url: str
) -> None:
    """A body the log stores deflated (bytes) comes back as the same message; in the database it
    is a marked text value, never a raw JSON string the reader could misread."""
    import psycopg

    sid = store.create_session(workspace="/w").id
    big = {"role": "user", "content": "abc " * 2000}
    store.append_message(sid, big)
    assert [m["content"] for m in store.messages(sid)] == [big["content"]]
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT body FROM messages").fetchone()
    assert row is not None
    assert row[0].startswith("\x01zlib:")


def test_a_database_from_a_newer_yagent_is_refused_untouched(pg_url: str) -> None:
    import psycopg

    from yagent.memory.errors import SchemaError

    with PgSessionStore(pg_url):
        pass
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 99 WHERE component = 'sessions'")
    with pytest.raises(SchemaError, match="schema version 99"):
        PgSessionStore(pg_url)


def test_stores_racing_for_one_key_make_one_session(pg_url: str) -> None:
    """Several machines (a store each) asking for the same key at once: one session is created,
    every one of them gets it — the lookup and the insert are one transaction under the lock."""
    import threading

    stores = [PgSessionStore(pg_url) for _ in range(6)]
    got: list[tuple[str, bool]] = []
    gate = threading.Barrier(len(stores))

    def ask(store: PgSessionStore) -> None:
        gate.wait(30)
        info, created = store.keyed_session("batch:b/t", workspace="/w")
        got.append((info.id, created))

    threads = [threading.Thread(target=ask, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for store in stores:
        store.close()
    assert len({sid for sid, _ in got}) == 1
    assert sorted(created for _, created in got) == [False] * 5 + [True]


def test_two_stores_writing_one_session_in_turn_take_every_seq_once(pg_url: str) -> None:
    """Machines writing the same session between each other's transactions: PostgreSQL has no
    `data_version`, so each transaction reads the last seq again — never one remembered."""
    with PgSessionStore(pg_url) as one, PgSessionStore(pg_url) as two:
        sid = one.create_session(workspace="/w").id
        for round_ in range(3):
            with one.batch(whole=True):
                one.append_event(sid, "one", {"round": round_})
                one.append_message(sid, {"role": "user", "content": f"one {round_}"})
            two.append_event(sid, "two", {"round": round_})
            two.append_message(sid, {"role": "user", "content": f"two {round_}"})
        events = one.events(sid)
        assert [e.seq for e in events] == list(range(1, 7))
        assert [e.type for e in events] == ["one", "two"] * 3
        assert [m["seq"] for m in two.messages(sid)] == list(range(1, 7))
