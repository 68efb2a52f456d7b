"""`app.opensession`: two sessions run at once through one app share none of their state.

The engine below holds each session's answer half-streamed until both sessions are there, so the
two runs are inside their turns together: each has text held for the display, records pending in
its step log, its band marker in use. Were any of that the app's (one log, one segment buffer,
one marker, one live context for every session), a record, a shown segment or a continued
context would land in the other session.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from yagent.app import opensession
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.llm.types import AssistantTurn, Request, StreamEvent, TextDelta, TurnDone, Usage

WORD = 60  # one word, no safe cut inside it: a half streamed is held, not shown (`app.segments`)


class BothHalfway:
    """Answers a task naming `alpha` with a word of A's, any other with B's; the second half of
    either answer waits until both first halves were streamed."""

    model = "both-halfway"

    def __init__(self) -> None:
        self.halfway = 0
        self.both = anyio.Event()

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        task = next(str(m.content) for m in request.messages if m.role == "user")
        word = ("A" if "alpha" in task else "B") * WORD
        yield TextDelta(word[: WORD // 2])
        self.halfway += 1
        if self.halfway == 2:
            self.both.set()
        await self.both.wait()
        yield TextDelta(word[WORD // 2 :])
        yield TurnDone(AssistantTurn(word, (), Usage(10, 5), "stop", self.model))


async def _two_at_once(app: App) -> dict[str, str]:
    """Runs the alpha and the bravo task at once; each letter's session id."""
    ids: dict[str, str] = {}

    async def one(letter: str, task: str) -> None:
        sid, result = await app.run(task, agent_name="chat")
        assert result.status.value == "answered", result.error
        ids[letter] = sid

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "A", "the alpha question")
            group.start_soon(one, "B", "the bravo question")
    return ids


@pytest.mark.anyio
async def test_two_sessions_at_once_through_one_app_keep_their_own_state(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    async with open_app(
        load(home=home, workspace=ws),
        home=home,
        workspace=ws,
        interactive=False,
        engine=BothHalfway(),
    ) as app:
        ids = await _two_at_once(app)
        shown = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            if event.type == "assistant_delta":
                shown.append(str(event.payload["text"]))
        opened = {letter: app.sessions.open(sid) for letter, sid in ids.items()}
        stored = {
            letter: [m["content"] for m in app.store.messages(sid) if m["role"] == "assistant"]
            for letter, sid in ids.items()
        }
    assert ids["A"] != ids["B"]
    # the display: each segment is one session's text, and each answer is shown whole
    assert all(set(text) in ({"A"}, {"B"}) for text in shown), shown
    assert sorted("".join(shown)) == sorted("A" * WORD + "B" * WORD)
    # the record: each session's log wrote its own messages into its own session
    assert stored == {"A": ["A" * WORD], "B": ["B" * WORD]}
    # the marker and the live context a next turn continues
    assert opened["A"] is not opened["B"]
    assert opened["A"].marker != opened["B"].marker
    for letter, session in opened.items():
        assert session.id == ids[letter]
        assert session.live is not None
        answers = [str(m.content) for m in session.live if m.role == "assistant"]
        assert answers == [letter * WORD]


class Answers:
    """Answers every task with `answer to <task>`; a task naming `hold` waits for `release`."""

    model = "answers"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.waiting = anyio.Event()
        self.release = anyio.Event()

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        task = [str(m.content) for m in request.messages if m.role == "user"][-1]
        if "hold" in task:
            self.waiting.set()
            await self.release.wait()
        text = f"answer to {task}"
        yield TextDelta(text)
        yield TurnDone(AssistantTurn(text, (), Usage(10, 5), "stop", self.model))


def _seen(request: Request) -> list[tuple[str, str]]:
    return [(m.role, str(m.content)) for m in request.messages if m.role != "system"]


@pytest.mark.anyio
async def test_idle_sessions_are_bounded_and_a_dropped_one_reopens_from_the_store(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opensession, "IDLE_LIMIT", 2)
    home, ws = dirs
    engine = Answers()
    async with open_app(
        load(home=home, workspace=ws), home=home, workspace=ws, interactive=False, engine=engine
    ) as app:
        ids = []
        for n in range(6):  # six sessions, one after the other: at most two stay open
            sid, result = await app.run(f"task {n}", agent_name="chat")
            assert result.status.value == "answered", result.error
            ids.append(sid)
            assert len(app.sessions) <= 2
            if n == 0:
                first = weakref.ref(app.sessions.get(sid))
        assert app.sessions.get(ids[0]) is None  # dropped: the least recently used
        gc.collect()
        assert first() is None  # and nothing else keeps it (or its live context) alive
        kept = app.sessions.get(ids[-1])
        assert kept is not None
        assert kept.live is not None  # the recent one keeps its context
        # the dropped session continues from the store; the kept one from its live context
        await app.run("again 0", agent_name="chat", session_id=ids[0])
        from_store = _seen(engine.requests[-1])
        await app.run("again 5", agent_name="chat", session_id=ids[-1])
        from_live = _seen(engine.requests[-1])
        assert app.sessions.get(ids[0]) is not None  # open again, the most recently used two
        assert len(app.sessions) == 2
    assert from_store == [
        ("user", "task 0"),
        ("assistant", "answer to task 0"),
        ("user", "again 0"),
    ]
    assert from_live == [
        ("user", "task 5"),
        ("assistant", "answer to task 5"),
        ("user", "again 5"),
    ]


@pytest.mark.anyio
async def test_a_session_a_run_holds_is_never_dropped(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opensession, "IDLE_LIMIT", 1)
    home, ws = dirs
    engine = Answers()
    async with open_app(
        load(home=home, workspace=ws), home=home, workspace=ws, interactive=False, engine=engine
    ) as app:
        held: list[str] = []

        async def long_run() -> None:
            sid, result = await app.run("hold on", agent_name="chat")
            assert result.status.value == "answered", result.error
            held.append(sid)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(long_run)
                await engine.waiting.wait()
                running = [s for s in app.store.list_sessions(limit=None) if s.title == "hold on"]
                live = app.sessions.get(running[0].id)
                assert live is not None
                for n in range(4):  # others come and go while it runs
                    await app.run(f"task {n}", agent_name="chat")
                    assert app.sessions.get(running[0].id) is live  # held: never dropped
                assert len(app.sessions) == 2  # the held one and one idle
                engine.release.set()
        assert app.sessions.get(held[0]) is live  # its run ended: idle, the most recent
        assert live.live is not None
        assert len(app.sessions) == 1
