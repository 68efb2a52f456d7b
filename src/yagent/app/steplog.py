"""A session's records, written per step: one store transaction at each of a step's commit points.

Contract:
- Every record of a session (rollout events, messages, usage, tool call rows and their results)
  goes through its `StepLog` in publish order. They are kept in memory and written together, in
  ONE `SessionStore.batch(whole=True)` transaction (no savepoint per record), at the step's
  commit points:
  · write-ahead: a `tool_call` event is written with everything before it (the model's turn that
    made the call, its message and usage) before the call runs — a process that dies mid-call
    leaves the call on record, for `runtrack.settle` to answer, and never silently re-run;
  · the step's end: its `sub_agent_activity` record (a step that ran tools) or its `reminder`
    (a step that did not), the next step's start and the run's end (`flush`);
  · any event of another kind (side effects, checkpoints, run end, leases, ...) is written at
    once, after what waited — so event seqs keep publish order exactly.
  A step that runs one tool costs two transactions (write-ahead, end), not one per record.
- A tool result is stored once: in its tool message. Its `tool_result` event and its tool call
  row refer to that message (`memory.log` resolves the reference on reading) when their
  log-scrubbed content is the message's own; when pii masked something they keep their copy.
- A write that fails raises at the commit point, as a single write did before; its transaction
  is rolled back whole (no step half-written) and its records are not retried. With a `full`
  (`app.fulldisk`), a batch that finds the disk full seals the run's record instead of raising:
  that batch and every later one are skipped, so what is stored stays an exact prefix.
Leaves to the caller: what the records say (`app.assemble`), when a run starts and ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from yagent.app.fulldisk import FullDisk
from yagent.memory import SUB_AGENT_ACTIVITY, SessionStore

# The loop's per-step records: kept until the step's next commit point.
DEFERRED = frozenset(
    {
        "context",  # the context economy's per-request metering
        "model_request",
        "assistant_turn",
        "tool_call",
        "tool_result",
        "reminder",
        SUB_AGENT_ACTIVITY,
    }
)
# Records after which the step so far is written (write-ahead, step end).
COMMITS = frozenset({"tool_call", "reminder", SUB_AGENT_ACTIVITY})

Write = Callable[[SessionStore], object]


class StepLog:
    """The pending records of one session (see the module contract); thread-safe."""

    def __init__(self, store: SessionStore, session_id: str, full: FullDisk | None = None) -> None:
        self._store = store
        self._full = full
        self.session_id = session_id
        self._pending: list[Write] = []
        self._lock = threading.Lock()
        self._tool_messages: dict[tuple[str, str], int] = {}  # (delegation, call id) -> seq
        self.transactions = 0  # batches written: what the per-step figures count

    # -- records ------------------------------------------------------------------------------
    def event(self, kind: str, payload: Mapping[str, Any], delegation: str) -> None:
        """A rollout event (already scrubbed for the log), and the tool call row it implies."""
        session = self.session_id

        def write(store: SessionStore) -> None:
            if kind == "tool_result":
                self._tool_result(store, payload, delegation)
                return
            store.append_event(session, kind, payload, delegation_id=delegation)
            if kind == "tool_call":
                store.record_tool_call(
                    session,
                    call_id=str(payload["call_id"]),
                    name=str(payload["name"]),
                    arguments=str(payload["arguments"]),
                    delegation_id=delegation,
                    started_at=time.time(),
                )

        self._add(write, commit=kind in COMMITS or kind not in DEFERRED)

    def message(self, body: Mapping[str, Any], agent: str, delegation: str) -> None:
        session = self.session_id

        def write(store: SessionStore) -> None:
            seq = store.append_message(session, body, agent=agent, delegation_id=delegation)
            if body.get("role") == "tool":
                self._tool_messages[(delegation, str(body.get("tool_call_id", "")))] = seq

        self._add(write, commit=False)

    def usage(self, **fields: Any) -> None:
        session = self.session_id
        self._add(lambda store: store.add_usage(session, **fields), commit=False)

    def flush(self) -> None:
        """Write what waits, in one transaction (nothing waits: nothing is written)."""
        with self._lock:
            pending, self._pending = self._pending, []
            if not pending:
                return
            self.transactions += 1
            if self._full is None:
                self._batch(pending)
            else:
                self._full.write(self._store.path, self._batch, pending)

    def _batch(self, pending: list[Write]) -> None:
        with self._store.batch(whole=True):  # no savepoint per record: the step is one unit
            for write in pending:
                write(self._store)

    # -- internals ----------------------------------------------------------------------------
    def _add(self, write: Write, *, commit: bool) -> None:
        with self._lock:
            self._pending.append(write)
        if commit:
            self.flush()

    def _tool_result(
        self, store: SessionStore, payload: Mapping[str, Any], delegation: str
    ) -> None:
        session, call_id = self.session_id, str(payload["call_id"])
        seq = self._tool_messages.pop((delegation, call_id), None)
        store.append_event(
            session, "tool_result", payload, delegation_id=delegation, content_message=seq
        )
        store.record_tool_result(
            session,
            call_id,
            content=str(payload["content"]),
            ok=bool(payload["ok"]),
            kind=payload.get("kind"),
            ended_at=time.time(),
            delegation_id=delegation,  # parallel tasks may reuse call ids
            content_message=seq,
        )
