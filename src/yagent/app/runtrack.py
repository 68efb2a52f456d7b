"""A run's durable record while it goes: a checkpoint per step, its end committed once, and the
calls a dead process left without a result settled — never re-run.

Contract:
- `step(n)` (the loop's `on_step` hook, before step n's model request) saves a snapshot: the
  steps before n COMPLETED with the digest of what they produced (their tool calls and results,
  seen through `observe`), step n RUNNING with the surface's loaded tools. Saves go through one
  `checkpoint.Committer`, so seqs only grow; each saves only the steps it changed (on a
  `checkpoint.StepsCAS` store; the first save of a resumed run writes the whole kept list), so a
  step costs the same at step 1 000 as at step 1. A concurrent writer of the same run (another
  process resuming it) shows as `StaleSeqError`: this track then stops writing and says so in a
  `checkpoint` event — it never follows the other writer silently.
- `end(status, error)`: a concluding status (durable.CONCLUDED) is committed through the commit
  gate, once per run — a branch that loses learns it in its `run_commit` event — and the snapshot
  turns SUCCEEDED. Any other status only checkpoints: the run stays ACTIVE and resumable.
- A store failure never stops the run: it is said in a `checkpoint` / `run_commit` event — except
  a full disk (`app.fulldisk`): it seals the record (no later snapshot is written, so the last
  one stored still shows the step RUNNING: resumable) and halts the run at its step boundary.
- `settle(history)`: every tool call of the history without a result (the process died mid-call)
  gets one, persisted in the session: the recorded result of a completed side effect, "OUTCOME
  UNKNOWN — reconcile" for a side effect whose intent never completed, "interrupted" for a call
  outside the side-effect store. Nothing is re-run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio

from yagent.agents import untrusted
from yagent.app.durable import CONCLUDED, END_STEP, Durable, ResumeDecision, RunRow
from yagent.app.fulldisk import FullDisk
from yagent.kernel.context import reminder
from yagent.kernel.durable import checkpoint, commitgate, sideeffect
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call
from yagent.llm import Message
from yagent.memory import SessionStore, ToolCallNotFoundError
from yagent.tools.effectrun import decode, idempotency_key, uncertain_text
from yagent.tools.toolresult import failure_content

Publish = Callable[[str, Mapping[str, Any]], None]
GATE_TTL = 30.0

# `json.dumps(facts, sort_keys=True, default=str)`, its encoder built once (a step's digest)
_FACTS = json.JSONEncoder(sort_keys=True, default=str)
# ... and the C encoder under it, built once too (`JSONEncoder.encode` builds one per call); no
# cycle check — a value it cannot encode goes to `_FACTS`, which says what was wrong
_MAKE_C: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_FACTS_C: Any = (
    None
    if _MAKE_C is None
    else _MAKE_C(
        None, str, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True
    )
)


def facts_text(facts: Any) -> str:
    """`json.dumps(facts, sort_keys=True, default=str)`, the same text."""
    if _FACTS_C is not None:
        try:
            return "".join(_FACTS_C(facts, 0))
        except (RecursionError, TypeError, ValueError):
            pass
    return _FACTS.encode(facts)


_RUNNING = checkpoint.StepStatus.RUNNING
_COMPLETED = checkpoint.StepStatus.COMPLETED


class RunTrack:
    """The durable record of one run in progress (see the module contract)."""

    def __init__(
        self,
        durable: Durable,
        run: RunRow,
        committer: checkpoint.Committer,
        *,
        store: SessionStore,
        publish: Publish,
        materialized: Callable[[], Mapping[str, Any]],
        full: FullDisk,
        prior: Sequence[checkpoint.StepRecord] = (),
    ) -> None:
        self.durable, self.run, self._committer = durable, run, committer
        self._full = full
        self._store, self._publish, self._materialized = store, publish, materialized
        self._records = {int(r.id): r for r in prior}
        self._changed: set[int] = set()  # steps changed since the last save
        self._whole = bool(prior)  # a resumed run's first save rewrites the kept steps
        # judged once: a runtime Protocol check walks the protocol's members on every call
        self._by_changes = isinstance(durable.checkpoints, checkpoint.StepsCAS)
        self._facts: dict[int, list[Any]] = {}
        self._current = 0
        self._detail_of: tuple[str, str, dict[str, Any], str] | None = None  # the last encoded
        self._stopped = False
        self.holder = sideeffect.default_holder()

    # -- observing the run ----------------------------------------------------------------------
    def observe(self, kind: str, payload: Mapping[str, Any]) -> None:
        step = payload.get("step")
        if not isinstance(step, int):
            return
        if kind == "assistant_turn":
            calls = [c.get("id") for c in payload.get("tool_calls", ())]
            self._facts.setdefault(step, []).append(["turn", payload.get("text", ""), calls])
        elif kind == "tool_result":
            fact = ["result", payload.get("call_id"), payload.get("ok")]
            self._facts.setdefault(step, []).append(fact)

    def publisher(self, inner: Publish) -> Publish:
        """`inner`, with every event seen by `observe` first."""

        def publish(kind: str, payload: Mapping[str, Any]) -> None:
            self.observe(kind, payload)
            inner(kind, payload)

        return publish

    # -- checkpoints ------------------------------------------------------------------------------
    async def step(self, n: int) -> None:
        if self._current:
            self._records[self._current] = self._completed(self._current)
            self._changed.add(self._current)
        self._current = n
        self._records[n] = checkpoint.StepRecord(str(n), _RUNNING, detail=self._detail(""))
        self._changed.add(n)
        await self._save(checkpoint.RunState.ACTIVE)

    @contextlib.asynccontextmanager
    async def guard(self) -> AsyncIterator[None]:
        """Around the loop: a run that raises (cancelled, or a bug) still records its end."""
        try:
            yield
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            await self.end("cancelled" if cancelled else "error", repr(exc))
            raise

    async def end(self, status: str, error: str = "") -> None:
        """Record how the run ended (shielded: the record outlives the cancellation)."""
        with anyio.CancelScope(shield=True):
            await self._end(status, error)

    async def _end(self, status: str, error: str) -> None:
        last = self._current or max(self._records, default=0)
        if last:
            done = self._completed(last) if last == self._current else self._records[last]
            self._records[last] = replace(done, detail=self._detail(status, error))
            self._changed.add(last)
        concluded = status in CONCLUDED
        if concluded:
            await self._commit(status, error)
        state = checkpoint.RunState.SUCCEEDED if concluded else checkpoint.RunState.ACTIVE
        await self._save(state)

    def _completed(self, n: int) -> checkpoint.StepRecord:
        facts = facts_text(self._facts.get(n, [])).encode()
        return checkpoint.StepRecord(str(n), _COMPLETED, checkpoint.digest(facts))

    def _detail(self, status: str, error: str = "") -> str:
        """A step's detail: how the run stands and the tools it has loaded. Encoded again only
        when one of them changed — a run's loaded set stays the same over most steps."""
        loaded = dict(self._materialized())
        error = error[:500]
        last = self._detail_of
        if last is not None and last[0] == status and last[1] == error and last[2] == loaded:
            return last[3]
        text = json.dumps({"status": status, "error": error, "materialized": loaded})
        self._detail_of = (status, error, loaded, text)
        return text

    async def _save(self, state: checkpoint.RunState) -> None:
        if self._stopped:
            return
        if self._full.hit is not None:  # sealed: the stored snapshot stays the last one written
            self._full.skipped += 1
            return
        try:
            if self._whole or not self._by_changes:
                await self._committer.commit(
                    state, [self._records[k] for k in sorted(self._records)]
                )
            else:
                changed = [self._records[k] for k in sorted(self._changed)]
                await self._committer.commit_steps(state, changed)
            self._whole = False
            self._changed.clear()
        except checkpoint.StaleSeqError as exc:
            self._stopped = True
            why = f"another process saved a newer checkpoint of this run ({exc}); this one stops"
            self._emit("checkpoint", {"ok": False, "reason": why})
        except checkpoint.CheckpointError as exc:
            if not self._full.note(self.durable.path, exc):
                self._emit("checkpoint", {"ok": False, "reason": f"checkpoint not saved: {exc}"})

    async def _commit(self, status: str, error: str) -> None:
        gate = self.durable.gate
        try:
            got = await gate.acquire(self.run.run_id, END_STEP, self.holder, GATE_TTL)
            if got.holding is not None:
                try:
                    await gate.commit(got.holding.token, status, error[:500])
                except commitgate.CommitGateError:
                    await gate.release_lease(got.holding.token)
                    raise
                self._emit("run_commit", {"committed": True, "state": status})
                return
            other = got.commit.state if got.commit is not None else f"held by {got.held_by}"
            why = f"another branch of this run concluded it first ({other}); this one did not"
            self._emit("run_commit", {"committed": False, "state": status, "reason": why})
        except commitgate.CommitGateError as exc:
            self._full.note(self.durable.path, exc)
            why = f"the commit gate failed: {exc}"
            self._emit("run_commit", {"committed": False, "state": status, "reason": why})

    def _emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        body = {"agent": self.run.agent, "delegation_id": self.run.delegation_id}
        self._publish(kind, {**body, "run_id": self.run.run_id, **payload})

    # -- settling the calls a dead process left open ----------------------------------------------
    async def settle(self, history: Sequence[Message]) -> list[Message]:
        """`history` with a result for every call that has none (see the module contract)."""
        answered = {m.tool_call_id for m in history if m.role == "tool"}
        out: list[Message] = []
        pending: list[Message] = []
        for message in history:
            if pending and message.role != "tool":
                out.extend(pending)
                pending = []
            out.append(message)
            for call in message.tool_calls if message.role == "assistant" else ():
                if call.id not in answered:
                    pending.append(await self._settle_call(call.id, call.name, call.arguments))
        out.extend(pending)
        return out

    async def _settle_call(self, call_id: str, name: str, arguments: str) -> Message:
        key = idempotency_key(self.run.session_id, self.run.delegation_id, call_id)
        record = await self.durable.effects.lookup(key)
        kind: toolfail.Kind | None = toolfail.Kind.CANCELLED
        ok, outcome = False, "interrupted"
        if record is None:
            text = (
                f"{name}: INTERRUPTED — the process stopped before this call's result was "
                "recorded. It is not a tracked external side effect, so how far it got is "
                "unknown (a file edit may be partly done). It is NOT re-run: check its effect "
                "before repeating it."
            )
            content = failure_content(toolfail.Kind.CANCELLED, text, outcome=outcome)
        elif record.state is sideeffect.State.COMPLETED:
            recorded = decode(Call(name, {}, call_id=call_id), record.result)
            ok, kind, outcome = recorded.ok, recorded.kind, "recorded"
            content = "[recorded before the interruption; not run again]\n" + recorded.content
        elif record.state is sideeffect.State.WITHDRAWN:
            text = f"{name}: did not take effect ({record.reason}); it is NOT re-run"
            content = failure_content(toolfail.Kind.CANCELLED, text, outcome="withdrawn")
            outcome = "withdrawn"
        else:
            kind, outcome = toolfail.Kind.UNKNOWN, "uncertain"
            why = record.reason or "the process died while it ran"
            text = uncertain_text(name, arguments, why)
            content = failure_content(kind, text, outcome=outcome, idempotency_key=key)
            self._emit(
                "side_effect",
                {
                    "call_id": call_id,
                    "name": name,
                    "key": key,
                    "outcome": outcome,
                    "reason": why,
                    "settled": True,
                },
            )
        message = untrusted.tool_message(call_id, name, content)
        session = self.run.session_id
        self._store.append_message(session, message.to_dict(), agent=self.run.agent)
        with contextlib.suppress(ToolCallNotFoundError):
            self._store.record_tool_result(
                session,
                call_id,
                content=message.content,
                ok=ok,
                kind=kind.value if kind else None,
                ended_at=self.run.started_at,
            )
        self._emit("tool_settled", {"call_id": call_id, "name": name, "outcome": outcome})
        return message


async def open_track(
    durable: Durable,
    *,
    store: SessionStore,
    session_id: str,
    agent: str,
    task: str,
    max_steps: int,
    publish: Publish,
    materialized: Callable[[], Mapping[str, Any]],
    full: FullDisk,
    resume: ResumeDecision | None = None,
    delegation_id: str = "",
) -> RunTrack:
    """A track for a new run, or for the run `resume` continues (its trusted steps kept, the
    interrupted one settled)."""
    if resume is None or resume.run is None:
        run = await durable.runs.new_run(session_id, delegation_id, agent, task, max_steps)
        committer = checkpoint.Committer(durable.checkpoints, run.run_id)
        return RunTrack(
            durable,
            run,
            committer,
            store=store,
            publish=publish,
            materialized=materialized,
            full=full,
        )
    run = resume.run
    committer = await checkpoint.Committer.open(durable.checkpoints, run.run_id)
    snapshot = await durable.checkpoints.load(run.run_id)
    keep = set(resume.resume.trusted + resume.resume.interrupted) if resume.resume else set()
    prior = [
        replace(r, status=_COMPLETED, digest=checkpoint.digest(b"settled at resume"), detail="")
        if r.status is not _COMPLETED
        else replace(r, detail="")
        for r in (snapshot.steps if snapshot is not None else ())
        if r.id in keep
    ]
    track = RunTrack(
        durable,
        run,
        committer,
        store=store,
        publish=publish,
        materialized=materialized,
        full=full,
        prior=prior,
    )
    track._emit("run_resumed", {"start_step": resume.start_step, "reason": resume.reason})
    return track


def continuation_task(decision: ResumeDecision) -> str:
    """The message that continues an interrupted run: what happened, and the original task."""
    run = decision.run
    original = run.task if run is not None else ""
    return reminder.wrap(
        f"This run was interrupted and is being resumed ({decision.reason}). Continue the task "
        "from where it stopped: the history above is what was done. Tool calls that were in "
        "flight have results saying what is known about them — a side effect whose outcome is "
        "unknown was NOT repeated; check it before doing anything that would repeat it.\n\n"
        f"The task:\n{original}"
    )
