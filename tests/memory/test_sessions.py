"""Sessions: ids, prefix lookup, listing order, status and title, the default path."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.memory import (
    STATUSES,
    AmbiguousSessionError,
    SessionNotFoundError,
    SessionStore,
    default_path,
)
from yagent.memory import sessions as sessions_module

from .conftest import FakeClock


def test_create_session_returns_what_get_session_reads(store: SessionStore, clock: FakeClock):
    info = store.create_session(workspace="/w", title="fix it", model="m1", meta={"a": [1, "b"]})
    assert info.status == "active"
    assert info.created_at == info.updated_at == clock.value
    assert (info.workspace, info.title, info.model, info.meta) == (
        "/w",
        "fix it",
        "m1",
        {"a": [1, "b"]},
    )
    assert store.get_session(info.id) == info
    assert len(info.id) == 26
    assert int(info.id, 16) >= 0


def test_ids_sort_by_creation_even_when_the_clock_stands_still_or_steps_back(
    store: SessionStore, clock: FakeClock
):
    ids = [store.create_session(workspace="/w").id for _ in range(5)]
    clock.advance(-10)
    ids.append(store.create_session(workspace="/w").id)
    clock.advance(20)
    ids.append(store.create_session(workspace="/w").id)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert ids[-1][:12] == f"{int(clock.value * 1000):012x}"


def test_id_random_part_overflow_moves_to_the_next_millisecond(monkeypatch: pytest.MonkeyPatch):
    millis = 1_800_000_000_000
    monkeypatch.setattr(sessions_module, "_last_id", (millis, (1 << 56) - 1))
    new = sessions_module.new_session_id(millis / 1000)
    assert new == f"{millis + 1:012x}{0:014x}"


def test_prefix_lookup_unique_ambiguous_unknown(store: SessionStore, clock: FakeClock):
    first = store.create_session(workspace="/w")
    second = store.create_session(workspace="/w")  # same millisecond: shares 12+ digits
    clock.advance(3600)
    third = store.create_session(workspace="/w")

    assert store.get_session(third.id[:12]).id == third.id
    assert store.get_session(third.id[:12].upper()).id == third.id
    assert store.get_session(f"  {first.id}  ").id == first.id

    common = first.id[:12]
    with pytest.raises(AmbiguousSessionError) as ambiguous:
        store.get_session(common)
    assert ambiguous.value.candidates == (first.id, second.id)
    assert ambiguous.value.total == 2
    assert first.id in str(ambiguous.value)

    with pytest.raises(SessionNotFoundError) as unknown:
        store.get_session("ffff")
    assert unknown.value.key == "ffff"
    assert "ffff" in str(unknown.value)
    with pytest.raises(SessionNotFoundError):
        store.get_session("   ")
    with pytest.raises(TypeError):
        store.get_session(7)  # type: ignore[arg-type]


def test_ambiguous_error_shows_at_most_ten_candidates(store: SessionStore):
    ids = [store.create_session(workspace="/w").id for _ in range(12)]
    with pytest.raises(AmbiguousSessionError) as ambiguous:
        store.get_session(ids[0][:12])
    assert ambiguous.value.candidates == tuple(ids[:10])
    assert ambiguous.value.total == 12
    assert "and 2 more" in str(ambiguous.value)


def test_list_sessions_most_recently_written_first(store: SessionStore, clock: FakeClock):
    old = store.create_session(workspace="/a")
    clock.advance(1)
    mid = store.create_session(workspace="/b")
    clock.advance(1)
    new = store.create_session(workspace="/a")
    assert [s.id for s in store.list_sessions()] == [new.id, mid.id, old.id]

    clock.advance(1)
    store.append_message(old.id, {"role": "user", "content": "again"})
    assert [s.id for s in store.list_sessions()] == [old.id, new.id, mid.id]
    assert store.get_session(old.id).updated_at == clock.value
    assert [s.id for s in store.list_sessions(limit=2)] == [old.id, new.id]
    assert [s.id for s in store.list_sessions(workspace="/a")] == [old.id, new.id]
    assert [s.id for s in store.list_sessions(limit=None)] == [old.id, new.id, mid.id]
    assert store.list_sessions(limit=0) == []
    assert store.list_sessions(workspace="/none") == []
    with pytest.raises(TypeError):
        store.list_sessions(limit=True)


def test_updated_at_never_goes_back(store: SessionStore, clock: FakeClock):
    info = store.create_session(workspace="/w")
    clock.advance(-100)
    store.append_event(info.id, "x", {})
    assert store.get_session(info.id).updated_at == info.updated_at


@pytest.mark.parametrize("status", STATUSES)
def test_set_status_accepts_every_status(store: SessionStore, clock: FakeClock, status: str):
    info = store.create_session(workspace="/w")
    clock.advance(5)
    store.set_status(info.id, status)
    after = store.get_session(info.id)
    assert after.status == status
    assert after.updated_at == info.updated_at + 5


def test_set_status_and_title_refuse_bad_values_and_unknown_sessions(store: SessionStore):
    info = store.create_session(workspace="/w")
    with pytest.raises(ValueError, match="status must be one of"):
        store.set_status(info.id, "done")
    store.set_title(info.id, "new title")
    assert store.get_session(info.id).title == "new title"
    with pytest.raises(TypeError):
        store.set_title(info.id, None)  # type: ignore[arg-type]
    with pytest.raises(SessionNotFoundError):
        store.set_status("nope", "finished")
    with pytest.raises(SessionNotFoundError):
        store.set_title("nope", "x")


def test_create_session_refuses_bad_arguments_before_writing(store: SessionStore):
    with pytest.raises(TypeError, match="workspace"):
        store.create_session(workspace=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="meta"):
        store.create_session(workspace="/w", meta={"x": {1, 2}})
    with pytest.raises(ValueError, match="surrogate"):
        store.create_session(workspace="/w", title="\ud800")
    assert store.list_sessions() == []


def test_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert default_path(tmp_path) == tmp_path / "sessions.db"
    monkeypatch.setenv("YAGENT_HOME", str(tmp_path / "yh"))
    assert default_path() == tmp_path / "yh" / "sessions.db"
    monkeypatch.setenv("YAGENT_HOME", "  ")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert default_path() == tmp_path / "user" / ".yagent" / "sessions.db"
    monkeypatch.delenv("YAGENT_HOME")
    assert default_path() == tmp_path / "user" / ".yagent" / "sessions.db"


def test_a_keyed_session_is_created_once_and_found_by_its_key(store: SessionStore):
    assert store.session_by_key("batch:b1/t1") is None
    first, created = store.keyed_session("batch:b1/t1", workspace="/w", title="t", meta={"x": 1})
    assert created is True
    assert (first.workspace, first.title, first.meta, first.status) == (
        "/w",
        "t",
        {"x": 1},
        "active",
    )
    again, created_again = store.keyed_session("batch:b1/t1", workspace="/elsewhere")
    assert (again, created_again) == (first, False)  # found, not re-created nor changed
    assert store.session_by_key("batch:b1/t1") == first
    other, _ = store.keyed_session("batch:b1/t2", workspace="/w")
    assert other.id != first.id
    assert store.session_by_key("batch:b1/t2") == other
    assert len(store.list_sessions(limit=None)) == 2


def test_a_keyed_session_refuses_a_bad_key_before_writing(store: SessionStore):
    with pytest.raises(ValueError, match="key"):
        store.keyed_session("", workspace="/w")
    with pytest.raises(TypeError, match="key"):
        store.keyed_session(None, workspace="/w")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="meta"):
        store.keyed_session("k", workspace="/w", meta={"x": {1}})
    assert store.list_sessions(limit=None) == []
    assert store.session_by_key("k") is None
