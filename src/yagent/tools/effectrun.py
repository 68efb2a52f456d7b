"""Side-effecting tool calls run at most once, through `sideeffect`, keyed by session, delegation
and call id.

Contract (`EffectRunner.run`, for a call `effects.EffectTable` classified as side-effecting):
- The idempotency key is `idempotency_key(session, delegation, call id)`; the action is UNSAFE (a
  second run would repeat the effect) and is its own resource. A replay of the same call — a
  resumed run replaying its model side — finds the key: completed ⇒ the recorded result, not run
  again; uncertain ⇒ "outcome unknown — reconcile", not run; in flight in a live process ⇒
  refused as contended; in flight in a process of this host that is gone ⇒ reported uncertain.
- While the call runs its lease is renewed every third of its ttl, so a long push keeps it; a
  process killed mid-call leaves the execution intent behind, which the store turns into "needs
  reconciliation" once the lease lapses — never a silent second run.
- A call whose effect may or may not have happened — it timed out, was killed by a signal, was
  cancelled, runs in the background, or failed in a way that does not prove nothing ran — is
  UNCERTAIN: the model reads that the outcome is unknown and must be checked, a `side_effect`
  event says so, and the key refuses to run again until someone resolves it (`yagent reconcile`).
- Every side-effecting call publishes one `side_effect` event with its outcome. Once the run was
  asked to stop, no new side effect starts. A store that fails fails the call closed: nothing
  runs that could not be recorded.
Not offered: exactly-once. That needs the downstream to deduplicate by the key (or to take the
lease's fence); git remotes, registries and MCP servers here do not, so a crash between the
effect and its record leaves a question for a person, not an answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio

from yagent.kernel.durable import sideeffect
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call
from yagent.tools.effects import EffectTable, Found
from yagent.tools.invocation import Publish
from yagent.tools.toolresult import ToolResult, failure_content, serialise
from yagent.toolspec import Spec

DEFAULT_LEASE = 30.0
"""Seconds a side-effecting call's lease lasts between renewals (config `[agent] effect_lease`)."""

Outcome = sideeffect.Outcome


def idempotency_key(session_id: str, delegation_id: str, call_id: str) -> str:
    """The one key derivation: `<session>/<delegation or ->/<call id>`, each part %-quoted."""
    return "/".join(quote(part or "-", safe="") for part in (session_id, delegation_id, call_id))


def holder_gone(holder: str) -> bool:
    """True when `holder` (`host:pid:…`, see `sideeffect.default_holder`) names a process of this
    host that no longer runs (or is a zombie). Another host's holder is never judged gone."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return False


def encode(result: ToolResult) -> bytes:
    kind = result.kind.value if result.kind else None
    return json.dumps({"ok": result.ok, "content": result.content, "kind": kind}).encode()


def decode(call: Call, data: bytes | None) -> ToolResult:
    """A recorded result (or one resolved without a result) as this call's `ToolResult`."""
    body: Any = json.loads(data) if data else None
    if not isinstance(body, dict):
        note = "it was recorded as applied, with no result kept"
        return ToolResult(call.call_id, call.tool, True, json.dumps({"note": note}), None)
    kind = toolfail.parse_kind(body["kind"]) if body.get("kind") else None
    return ToolResult(call.call_id, call.tool, bool(body.get("ok")), str(body["content"]), kind)


def uncertain_text(tool: str, detail: str, reason: str) -> str:
    return (
        f"{tool}: OUTCOME UNKNOWN — {detail!r} may or may not have taken effect ({reason}). It was "
        "NOT run again. Check the target (the remote branch, the registry, the deployment, the "
        "service) before anything that would repeat it; a person records the answer with "
        "`yagent reconcile`."
    )


@dataclass
class EffectRunner:
    """Runs the side-effecting calls of one session (and delegation) through a sideeffect store."""

    store: sideeffect.Store
    table: EffectTable
    session_id: str
    delegation_id: str = ""
    publish: Publish | None = None
    ttl: float = DEFAULT_LEASE
    stopping: Callable[[], bool] = lambda: False
    holder: str = field(default_factory=sideeffect.default_holder)
    on_store_error: Callable[[BaseException], object] = lambda exc: None  # a full disk, say

    def key(self, call_id: str) -> str:
        return idempotency_key(self.session_id, self.delegation_id, call_id)

    def classify(self, spec: Spec, args: Any) -> Found | None:
        return self.table.classify(spec, args)

    async def run(
        self, found: Found, call: Call, invoke: Callable[[], Awaitable[Any]]
    ) -> ToolResult:
        """Run `invoke` (the executor) at most once for this call; see the module contract."""
        key = self.key(call.call_id)
        if self.stopping():
            return self._refused(
                call,
                found,
                key,
                toolfail.Kind.CANCELLED,
                "not started: the run was asked to stop before this side effect began",
            )
        ran: list[ToolResult] = []
        started = False

        async def apply(lease: sideeffect.Lease) -> bytes:
            nonlocal started
            started = True
            data = await self._renewing(lease, invoke)
            result = serialise(call.call_id, call.tool, data)
            ran.append(result)
            unsure = found.unsure(data) if found.unsure is not None else ""
            if unsure:
                raise toolfail.ToolFailure(toolfail.Kind.UNKNOWN, unsure)
            return encode(result)

        action = sideeffect.Action(key, key, sideeffect.RetrySafety.UNSAFE)
        try:
            done = await sideeffect.execute_with(
                self.store, action, None, apply, holder=self.holder, ttl=self.ttl
            )
        except sideeffect.SideEffectError as exc:
            self.on_store_error(exc)  # the host judges it (a full disk halts the run)
            why = f"the side-effect store failed, so nothing ran: {exc}"
            return self._refused(call, found, key, toolfail.Kind.INTERNAL, why)
        except BaseException:
            if started:  # cancelled mid-effect: the store marked it uncertain (shielded)
                why = "cancelled while running"
                self._emit(call, found, key, "uncertain", why, reconcile=True)
            raise
        return await self._report(done, call, found, key, ran[0] if ran else None)

    async def _renewing(self, lease: sideeffect.Lease, invoke: Callable[[], Awaitable[Any]]) -> Any:
        failure: list[Exception] = []
        data: list[Any] = []
        renewal = anyio.CancelScope()  # only the renewal is cancelled, never this task
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._renew, lease, renewal)
            try:
                data.append(await invoke())
            except Exception as exc:  # raised after the group, not wrapped in an exception group
                failure.append(exc)
            finally:
                renewal.cancel()
        if failure:
            raise failure[0]
        return data[0]

    async def _renew(self, lease: sideeffect.Lease, scope: anyio.CancelScope) -> None:
        with scope:
            while True:
                await anyio.sleep(self.ttl / 3)
                try:
                    lease = await self.store.renew(lease, self.ttl)
                except sideeffect.SideEffectError:
                    return  # lost: recording will be refused, and the outcome reported uncertain

    async def _report(
        self,
        done: sideeffect.Execution,
        call: Call,
        found: Found,
        key: str,
        ran: ToolResult | None,
    ) -> ToolResult:
        outcome, reason = done.outcome, done.reason
        if outcome is Outcome.CONTENDED:
            record = await self.store.lookup(key)
            if record is None or not holder_gone(record.holder):
                why = f"this call is already running elsewhere and is not run twice: {reason}"
                return self._refused(call, found, key, toolfail.Kind.CONFLICT, why)
            outcome = Outcome.UNCERTAIN
            reason = (
                f"the process that ran it ({record.holder}) is gone; its lease lapses at "
                f"{record.expires_at:.0f}, then it can be reconciled"
            )
        if outcome is Outcome.APPLIED and ran is not None:
            self._emit(call, found, key, "applied", "")
            return ran
        if outcome is Outcome.ALREADY_DONE:
            self._emit(call, found, key, "already_done", "recorded result returned, not run again")
            recorded = decode(call, done.result)
            note = "[the recorded result of an earlier run of this same call; not run again]\n"
            return ToolResult(
                call.call_id, call.tool, recorded.ok, note + recorded.content, recorded.kind
            )
        if outcome is Outcome.UNRECORDED and ran is not None:
            why = f"applied, but not recorded — it needs reconciliation: {reason}"
            self._emit(call, found, key, "unrecorded", why, reconcile=done.needs_reconciliation)
            return dataclasses.replace(ran, content=f"{ran.content}\n[{why}]")
        if outcome is Outcome.UNCERTAIN:
            self._emit(call, found, key, "uncertain", reason, reconcile=True)
            extra = {"output": ran.content} if ran is not None else {}
            text = uncertain_text(call.tool, found.detail, reason)
            content = failure_content(
                toolfail.Kind.UNKNOWN, text, outcome="uncertain", idempotency_key=key, **extra
            )
            return ToolResult(call.call_id, call.tool, False, content, toolfail.Kind.UNKNOWN)
        if outcome is Outcome.LEASE_LOST:
            why = f"not started: the lease was lost before the effect began: {reason}"
            return self._refused(call, found, key, toolfail.Kind.CONFLICT, why)
        kind = done.kind or toolfail.Kind.UNKNOWN
        error = done.error
        msg = f"{call.tool} failed: {type(error).__name__}: {error}" if error else reason
        self._emit(call, found, key, "failed", msg)
        return ToolResult(call.call_id, call.tool, False, failure_content(kind, msg), kind)

    def _refused(
        self, call: Call, found: Found, key: str, kind: toolfail.Kind, why: str
    ) -> ToolResult:
        self._emit(call, found, key, "refused", why)
        content = failure_content(kind, f"{call.tool}: {why}", idempotency_key=key)
        return ToolResult(call.call_id, call.tool, False, content, kind)

    def _emit(
        self, call: Call, found: Found, key: str, outcome: str, reason: str, reconcile: bool = False
    ) -> None:
        if self.publish is None:
            return
        payload: dict[str, Any] = {
            "delegation_id": self.delegation_id,
            "call_id": call.call_id,
            "name": call.tool,
            "rule": found.rule,
            "detail": found.detail,
            "key": key,
            "outcome": outcome,
            "reason": reason,
        }
        if reconcile:
            payload["reconcile"] = (
                f"yagent reconcile {self.session_id} --applied {key} | --not-applied {key}"
            )
        self.publish("side_effect", payload)
