"""A session's records, written per step: one store transaction at each of a step's commit points.

Contract:
- Every record of a session (rollout events, messages, usage, tool call rows and their results)
  goes through its `StepLog` in publish order. They are kept in memory and written together, in
  ONE transaction (`SessionStore.write_records`: one statement per record, no savepoint), at the
  step's commit points:
  · write-ahead: a `tool_call` event is written with everything before it (the model's turn that
    made the call, its message and usage) before the call runs — a process that dies mid-call
    leaves the call on record, for `runtrack.settle` to answer, and never silently re-run;
  · the step's end: its `sub_agent_activity` record (a step that ran tools) or its `reminder`
    (a step that did not), the next step's start and the run's end (`flush`);
  · any event of another kind (side effects, checkpoints, run end, leases, ...) is written at
    once, after what waited — so event seqs keep publish order exactly.
  A step that runs one tool costs two transactions (write-ahead, end), not one per record: why
  two and not one, and what a crash between them leaves, is
  docs/adr/0026-two-session-commits-per-step.md.
- A tool result is stored once: in its tool message. Its `tool_result` event and its tool call
  row refer to that message (`memory.log` resolves the reference on reading) when their
  log-scrubbed content is the message's own; when pii masked something they keep their copy.
  The message is named by its `PendingMessage` handle: a message whose transaction failed is
  never referenced (a copy is kept instead).
- A write that fails raises at the commit point, as a single write did before; its transaction
  is rolled back whole (no step half-written) and its records are not retried. A record is
  turned into the store's form at the commit point too (a payload without `call_id` fails
  there, with the rest of its step); a call's `started_at` and a result's `ended_at` are when
  its event was published. With a `full` (`app.fulldisk`), a batch that finds the disk full
  seals the run's record instead of raising: that batch and every later one are skipped, so
  what is stored stays an exact prefix.
Leaves to the caller: what the records say (`app.assemble`), when a run starts and ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from yagent.app.fulldisk import FullDisk
from yagent.memory import (
    SUB_AGENT_ACTIVITY,
    Pending,
    PendingCall,
    PendingEvent,
    PendingMessage,
    PendingResult,
    PendingUsage,
    SessionStore,
)

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

# What waits: an event (kind, payload, delegation, when), a message or a usage record.
Waiting = tuple[str, Mapping[str, Any], str, float] | PendingMessage | PendingUsage


class StepLog:
    """The pending records of one session (see the module contract); thread-safe."""

    def __init__(self, store: SessionStore, session_id: str, full: FullDisk | None = None) -> None:
        self._store = store
        self._full = full
        self.session_id = session_id
        self._pending: list[Waiting] = []
        self._lock = threading.Lock()
        self._tool_messages: dict[tuple[str, str], PendingMessage] = {}  # (delegation, call id)
        self.transactions = 0  # batches written: what the per-step figures count

    # -- records ------------------------------------------------------------------------------
    def event(self, kind: str, payload: Mapping[str, Any], delegation: str) -> None:
        """A rollout event (already scrubbed for the log), and the tool call row it implies."""
        with self._lock:
            self._pending.append((kind, payload, delegation, time.time()))
        if kind in COMMITS or kind not in DEFERRED:
            self.flush()

    def message(self, body: Mapping[str, Any], agent: str, delegation: str) -> None:
        with self._lock:
            self._pending.append(PendingMessage(body, agent, delegation))

    def usage(self, **fields: Any) -> None:
        with self._lock:
            self._pending.append(PendingUsage(**fields))

    def flush(self) -> None:
        """Write what waits, in one transaction (nothing waits: nothing is written)."""
        with self._lock:
            pending, self._pending = self._pending, []
            if not pending:
                return
            self.transactions += 1
            if self._full is None:
                self._write(pending)
            else:
                self._full.write(self._store.path, self._write, pending)

    # -- internals ----------------------------------------------------------------------------
    def _write(self, pending: list[Waiting]) -> None:
        records: list[Pending] = []
        for item in pending:
            if isinstance(item, tuple):
                self._event_records(records, *item)
                continue
            records.append(item)
            if type(item) is PendingMessage and item.body.get("role") == "tool":
                key = (item.delegation_id, str(item.body.get("tool_call_id", "")))
                self._tool_messages[key] = item
        self._store.write_records(self.session_id, records)

    def _event_records(
        self,
        records: list[Pending],
        kind: str,
        payload: Mapping[str, Any],
        delegation: str,
        when: float,
    ) -> None:
        if kind == "tool_result":
            call_id = str(payload["call_id"])
            message = self._tool_messages.pop((delegation, call_id), None)
            records.append(PendingEvent(kind, payload, delegation, message))
            records.append(
                PendingResult(
                    call_id=call_id,
                    content=str(payload["content"]),
                    ok=bool(payload["ok"]),
                    kind=payload.get("kind"),
                    ended_at=when,
                    delegation_id=delegation,  # parallel tasks may reuse call ids
                    content_message=message,
                )
            )
            return
        records.append(PendingEvent(kind, payload, delegation))
        if kind == "tool_call":
            records.append(
                PendingCall(
                    call_id=str(payload["call_id"]),
                    name=str(payload["name"]),
                    arguments=str(payload["arguments"]),
                    delegation_id=delegation,
                    started_at=when,
                )
            )
