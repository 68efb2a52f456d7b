"""Fixtures for the session store tests: a real SQLite file per test and a clock tests move."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.memory import SessionStore


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.value = start

    def now(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions.db"


@pytest.fixture
def store(db_path: Path, clock: FakeClock) -> Iterator[SessionStore]:
    with SessionStore(db_path, clock=clock) as opened:
        yield opened


@pytest.fixture(autouse=True)
def _fresh_id_sequence(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ids are monotonic per process; tests run fake clocks at different times, so each starts over.
    from yagent.memory import sessions

    monkeypatch.setattr(sessions, "_last_id", (0, 0))


@pytest.fixture
def sid(store: SessionStore) -> str:
    return store.create_session(workspace="/w").id
