"""The session layer's per-session state: one `OpenSession` per session this process runs.

Contract:
- `OpenSession` owns everything one session id holds in this process, apart from the app's
  long-lived services: its step log (`app.steplog`: every record of the session is written
  through it, one transaction per commit point), its streamed text not yet shown
  (`app.segments`), its band marker (drawn when the session is opened, kept in memory only, never
  written to a store or an event) and its live context (the compacted history its last finished
  run left, which the next run of the session in this process continues instead of the stored
  messages).
- `publish` is the session's event outlet: an `assistant_delta` is display-only (shown a screened
  segment at a time, neither stored nor observed); any other event first shows the lane's held
  text, then is written to the step log and given to the observers as pii's LOG surface keeps it
  and shown as its DISPLAY surface does. `recorder()` is the session's other writes
  (`app.recorder`), priced by the app's ledger, for the engine's model at the time it is made.
  `close()` writes what a run left pending; a run calls it at its end, however it ended, and the
  session stays open for its next run.
- Every run in one session shares its `OpenSession` — a turn, the lanes of a parallel run, the
  Director's delegations (they run in the delegator's session) — as they share its records; two
  sessions share none of it, even when they run at once through one app.
- `OpenSessions` is the table the app keeps of the sessions it has opened. `held(id)` gives the
  session's one `OpenSession` (made on first use) for as long as a run holds it: a turn, a
  parallel run and a remote lane each hold their session while they run, and one session may be
  held by several at once (its lanes and delegations). A held session is never dropped. When the
  last holder lets go the session is idle: it stays open with its live context, and the table
  keeps at most `IDLE_LIMIT` idle sessions — opening or letting go of one beyond that drops the
  least recently used idle ones (their pending records written first). So a long-lived host (a
  worker, an interactive session that switches sessions) keeps what its live runs and its
  recent sessions need, not one `OpenSession` per session it ever ran. A dropped session opened
  again is made afresh: its next run reads its history from the store (as a run in another
  process would) and draws a new band marker; only the compacted live context is lost, which
  costs the next turn a longer history, never a record. `open(id)` gives the session without
  holding it (an idle one, counted in the bound); `get(id)` never makes one; `publisher(id)`
  publishes into it by id, for what outlives its runs (so nothing but the table keeps a session).
- `Outlets` is what a session writes to and shows on; it is read at each use (the engine and the
  configuration may be switched between turns: `/model`). `App` satisfies it.
Refused: nothing here opens a store, a connection or a lease, nor decides how a run goes.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from yagent.app.fulldisk import FullDisk
from yagent.app.recorder import Recorder
from yagent.app.safety import Safety
from yagent.app.segments import Segments
from yagent.app.steplog import StepLog
from yagent.kernel.context import reminder
from yagent.llm import Message
from yagent.llm.pricing import Ledger
from yagent.llm.types import Engine
from yagent.memory import SessionStore
from yagent.messaging import Dispatcher, Event

Observer = Callable[[Event], None]
IDLE_LIMIT = 8  # idle sessions kept open (with their live context) beyond those held by a run


class Outlets(Protocol):
    """The long-lived services a session writes to and shows on (module contract)."""

    store: SessionStore
    full: FullDisk
    safety: Safety
    dispatcher: Dispatcher
    observers: list[Observer]
    ledger: Ledger
    engine: Engine


class OpenSession:
    """One session's state in this process (module contract)."""

    def __init__(self, session_id: str, outlets: Outlets) -> None:
        self.id = session_id
        self.log = StepLog(outlets.store, session_id, outlets.full)
        self.marker = reminder.new_marker()
        self.live: tuple[Message, ...] | None = None
        self._segments = Segments()
        self._outlets = outlets

    def publish(self, kind: str, payload: Mapping[str, Any]) -> None:
        delegation = str(payload.get("delegation_id", ""))
        if kind == "assistant_delta":  # display-only: shown a screened segment at a time
            self._show(kind, self._segments.feed(payload), delegation)
            return
        self._show("assistant_delta", self._segments.flush(delegation), delegation)
        # pii: what the rollout and traces keep, and what the terminal shows
        logged, shown = self._outlets.safety.for_log_and_display(payload)
        self.log.event(kind, logged, delegation)
        seen = Event(kind, logged, delegation)  # one event (frozen) for every observer
        for observer in self._outlets.observers:
            observer(seen)
        self._outlets.dispatcher.send(Event(kind, shown, delegation, seen.ts))

    def _show(self, kind: str, payloads: list[dict[str, Any]], delegation: str) -> None:
        for payload in payloads:
            shown = self._outlets.safety.for_display(payload)
            self._outlets.dispatcher.send(Event(kind, shown, delegation))

    def recorder(self) -> Recorder:
        """The session's writes besides its events (`app.recorder`): messages, usage, rollout."""
        outlets = self._outlets
        return Recorder(
            self.log, outlets.ledger, outlets.engine.model, outlets.safety.for_log, self.publish
        )

    def take_live(self) -> tuple[Message, ...] | None:
        """The live context, handed to the run that continues it (None when there is none)."""
        live, self.live = self.live, None
        return live

    def close(self) -> None:
        """Write what the run left pending (the session stays open for its next run)."""
        self.log.flush()


class OpenSessions:
    """The sessions this process has open, one `OpenSession` each (module contract)."""

    def __init__(self, outlets: Outlets) -> None:
        self._outlets = outlets
        self._open: OrderedDict[str, OpenSession] = OrderedDict()  # least recently used first
        self._holders: dict[str, int] = {}

    def open(self, session_id: str) -> OpenSession:
        """The session's `OpenSession`, made on first use, not held (idle unless a run holds it)."""
        found = self._open.get(session_id)
        if found is None:
            found = self._open[session_id] = OpenSession(session_id, self._outlets)
        self._open.move_to_end(session_id)
        self._trim()
        return found

    @contextlib.contextmanager
    def held(self, session_id: str) -> Iterator[OpenSession]:
        """The session's `OpenSession`, never dropped until the last holder lets go."""
        self._holders[session_id] = self._holders.get(session_id, 0) + 1
        try:
            yield self.open(session_id)
        finally:
            left = self._holders[session_id] - 1
            if left:
                self._holders[session_id] = left
            else:
                del self._holders[session_id]
                self._open.move_to_end(session_id)  # the most recently used idle one
                self._trim()

    def get(self, session_id: str) -> OpenSession | None:
        return self._open.get(session_id)

    def publisher(self, session_id: str) -> Callable[[str, Mapping[str, Any]], None]:
        """`publish` into the session found by its id at each call, for what outlives a run (the
        hooks' `session_end`, fired when the app closes): it keeps the table, never the session,
        so an idle session it names can still be dropped (and is opened again to publish)."""

        def publish(kind: str, payload: Mapping[str, Any]) -> None:
            self.open(session_id).publish(kind, payload)

        return publish

    def __len__(self) -> int:
        return len(self._open)

    def _trim(self) -> None:
        idle = [sid for sid in self._open if sid not in self._holders]
        for sid in idle[: max(0, len(idle) - IDLE_LIMIT)]:
            self._open.pop(sid).close()  # what it left pending is written before it goes
