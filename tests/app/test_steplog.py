"""The app's records per step, through a real App and a real session store: a step costs two
transactions (write-ahead before its tool runs, its results at its end), what a tool run depends
on is stored before it runs, and streamed text is screened a whole line at a time."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from yagent.agents import catalog
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.memory import SessionStore, message_body
from yagent.messaging import Event

from .files import write

MARKER = catalog.builtin("coding", 0).marker
MOBILE = "13912345678"


def think_script(steps: int) -> list[Any]:
    script = [
        call("think", json.dumps({"thought": f"t{i}"}), call_id=f"c{i}") for i in range(steps)
    ]
    return [*script, call("agent_exit", json.dumps({"reason": "done"}), call_id="cx")]


async def run_counting(
    dirs: tuple[Path, Path],
    script: list[Any],
    observer: Callable[[App, Event], None] | None = None,
    statements: list[str] | None = None,
) -> tuple[str, int]:
    """Run `script`; the session and how many write transactions its store began (and every
    statement the store ran, into `statements`)."""
    home, ws = dirs
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        begins: list[str] = []

        def trace(sql: str) -> None:
            if sql == "BEGIN IMMEDIATE":
                begins.append(sql)
            if statements is not None:
                statements.append(sql)

        app.store._live().set_trace_callback(trace)
        if observer is not None:
            app.observers.append(lambda event: observer(app, event))
        session_id, result = await app.run("go", agent_name="coding")
        assert result.status.value == "finished", result.error
        return session_id, len(begins)


@pytest.mark.anyio
async def test_a_step_costs_two_transactions_whatever_it_records(tmp_path: Path) -> None:
    counts = []
    for steps in (4, 14):
        home, ws = tmp_path / f"h{steps}", tmp_path / f"w{steps}"
        ws.mkdir()
        _, begins = await run_counting((home, ws), think_script(steps))
        counts.append(begins)
    per_step = (counts[1] - counts[0]) / 10
    # each step records 3 events, 2 messages, usage, a call row and its result: 8 writes
    assert per_step == 2, counts


@pytest.mark.anyio
async def test_a_tool_step_runs_nineteen_statements_and_reads_no_seq_back(tmp_path: Path) -> None:
    ran: list[list[str]] = []
    for steps in (4, 14):
        home, ws = tmp_path / f"h{steps}", tmp_path / f"w{steps}"
        ws.mkdir()
        ran.append([])
        await run_counting((home, ws), think_script(steps), statements=ran[-1])
    per_step = (len(ran[1]) - len(ran[0])) / 10
    # write-ahead: BEGIN, the seq check, the session's time, four events, the usage, the
    # assistant message, the call row, COMMIT; the step's end: BEGIN, the seq check, the
    # session's time, the tool message, two events, the call's result, COMMIT
    assert per_step <= 19, per_step
    # each table's last seq is read once per run, not once per transaction
    seq_reads = [len([sql for sql in run if "MAX(seq)" in sql]) for run in ran]
    assert seq_reads[0] == seq_reads[1] <= 4, seq_reads


@pytest.mark.anyio
async def test_a_step_writes_its_records_without_a_savepoint_each(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    engine = ScriptedEngine({"coding": think_script(3)}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        statements: list[str] = []
        app.store._live().set_trace_callback(statements.append)
        session_id, result = await app.run("go", agent_name="coding")
        app.store._live().set_trace_callback(None)
        calls = app.store.tool_calls(session_id)
    assert result.status.value == "finished"
    assert len(calls) == 4
    assert [sql for sql in statements if "SAVEPOINT" in sql] == []


@pytest.mark.anyio
async def test_a_call_is_on_record_before_it_runs_and_its_result_before_the_next_step(
    dirs: tuple[Path, Path],
) -> None:
    seen: list[tuple[str, int, int, int]] = []

    def look(app: App, event: Event) -> None:
        if event.type not in ("tool_call", "model_request"):
            return
        sid = app.store.list_sessions(limit=1)[0].id
        with SessionStore(app.store.path) as other:  # another connection: committed data only
            calls = other.tool_calls(sid)
            done = sum(c.ended_at is not None for c in calls)
            turns = sum(m["role"] == "assistant" for m in other.messages(sid))
        seen.append((event.type, len(calls), done, turns))

    await run_counting(dirs, think_script(2), look)
    assert seen == [
        ("model_request", 0, 0, 0),
        ("tool_call", 1, 0, 1),  # write-ahead: the turn and its call, before the call runs
        ("model_request", 1, 1, 1),  # the step's result, before the next model request
        ("tool_call", 2, 1, 2),
        ("model_request", 2, 2, 2),
        ("tool_call", 3, 2, 3),
    ]


@pytest.mark.anyio
async def test_streamed_text_is_shown_in_screened_segments_never_a_raw_piece(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    write(home / "config.toml", '[pii]\ndisplay = "mask"\n')
    text = f"Reach me at {MOBILE} today.\nThat is all.\n"  # the number spans two 16-char deltas
    engine = ScriptedEngine({"coding": [say(text)]}, markers={"coding": MARKER})
    observed: list[str] = []
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        app.observers.append(lambda event: observed.append(event.type))
        session_id, _ = await app.run("go", agent_name="coding")
        shown = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown.append(event)
        stored = {e.type for e in app.store.events(session_id)}
    deltas = [e.payload["text"] for e in shown if e.type == "assistant_delta"]
    # segments cut where no match can span (app.segments): the number is never shown raw,
    # not even in part, and the segments add up to the screened text
    assert "".join(deltas) == "Reach me at [MOBILE] today.\nThat is all.\n"
    assert len(deltas) > 1
    assert not any(MOBILE[:4] in d for d in deltas)
    assert "assistant_delta" not in stored
    assert "assistant_delta" not in observed
    turn = next(e for e in shown if e.type == "assistant_turn")
    assert MOBILE not in turn.payload["text"]


@pytest.mark.anyio
async def test_a_step_checkpoint_writes_that_step_not_the_run(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    engine = ScriptedEngine({"coding": think_script(30)}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        written: list[str] = []
        conn = app.durable.checkpoints._db._connection()
        conn.set_trace_callback(lambda sql: written.append(sql) if "checkpoint_" in sql else None)
        session_id, result = await app.run("go", agent_name="coding")
        conn.set_trace_callback(None)
        decision = await app.durable.decide(session_id)
    assert result.status.value == "finished"
    saves = [sql for sql in written if sql.startswith("INSERT")]
    assert max(len(sql) for sql in saves) < 1500  # never the 30 steps before it again
    assert len(saves) >= 2 * 31  # the snapshot row and the changed steps, every step
    # what resume reads is still the whole run: every step, the last one concluded
    assert decision.run is not None
    assert decision.commit is not None
    snapshot = decision.resume
    assert snapshot is not None
    assert len(snapshot.trusted) == 31


def used_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, size = (
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
    finally:
        conn.close()
    return int((pages - free) * size)


@pytest.mark.anyio
async def test_the_store_grows_by_about_the_bytes_of_the_steps_messages(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    lines = (f"line {n:03d} of a file the agent reads again and again\n" for n in range(34))
    (ws / "a.txt").write_text("".join(lines))  # a 1.9 KB tool output, as in issue 17
    steps = 40
    script = [
        call("read_file", json.dumps({"path": "a.txt"}), call_id=f"c{i}") for i in range(steps)
    ]
    script.append(call("agent_exit", json.dumps({"reason": "done"}), call_id="cx"))
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        app.store.create_session(workspace=str(ws))  # the file's first pages are in place
        before = used_bytes(app.store.path)
        session_id, result = await app.run("go", agent_name="coding")
        grown = used_bytes(app.store.path) - before
        messages = [message_body(m) for m in app.store.messages(session_id)]
        (call_row, *_) = app.store.tool_calls(session_id)
    assert result.status.value == "finished"
    assert len(call_row.content or "") > 1900
    text = sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) for m in messages)
    assert grown <= 1.5 * text, (grown, text)
