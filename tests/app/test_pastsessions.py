"""The Meta agent's reader over the session store: 'last' skips the current session, a missing
session is a LookupError, long texts are cut visibly, pages say what remains; and the tools
refuse clearly when no reader is wired."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.app import pastsessions
from yagent.app.pastsessions import StoreReader
from yagent.kernel.judge import toolfail
from yagent.memory import SessionStore
from yagent.tools import sessionread
from yagent.tools.adapter import ToolContext
from yagent.toolspec.sessions import ReadSessionArgs


def _store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions.db")


def test_c4_last_is_the_latest_other_session(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with _store(tmp_path) as store:
        with pytest.raises(LookupError, match="no earlier session"):
            StoreReader(store, ws, "x").read_session("last", "overview", 0, 5)
        old = store.create_session(workspace=str(ws), title="old").id
        store.create_session(workspace=str(tmp_path / "elsewhere"), title="other workspace")
        current = store.create_session(workspace=str(ws), title="now").id
        reader = StoreReader(store, ws, current)
        assert reader.read_session("last", "overview", 0, 5)["session"]["id"] == old
        listed = reader.list_sessions(1, False)
        assert [s["id"] for s in listed["sessions"]] == [current]
        assert "more than 1" in listed["truncated"]
        with pytest.raises(LookupError, match="no session"):
            reader.read_session("ffff", "overview", 0, 5)


def test_c4_long_texts_are_cut_visibly_and_pages_say_what_remains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pastsessions, "CLIP", 10)
    with _store(tmp_path) as store:
        sid = store.create_session(workspace=str(tmp_path)).id
        for n in range(3):
            store.append_message(sid, {"role": "assistant", "content": f"reply {n} " + "x" * 40})
        page = StoreReader(store, tmp_path, "").read_session(sid, "messages", 1, 1)
    assert (page["total"], page["next_offset"]) == (3, 2)
    (item,) = page["items"]
    assert item["content"].startswith("reply 1 x")
    assert "characters cut]" in item["content"]


@pytest.mark.anyio
async def test_c4_tools_without_a_reader_say_it_is_not_wired(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path, surface=None)  # type: ignore[arg-type]
    with pytest.raises(toolfail.ToolFailure, match="not wired"):
        await sessionread.read_session(ctx, ReadSessionArgs())
