"""The Director's delegations: each a fresh, confined agent run in the delegator's session.

Contract (Director constraints C4, C9, C10, C11; `docs/agents.md`; where it departs from the spec:
`docs/adr/0010-director-delegation.md`):
- Every agent run gets a `Runner` in its tool context (`tools.hostservices.RUNNER_KEY`); a top-level
  run makes the `Pool`, a delegated run shares its delegator's (`Lane.link`).
- A delegate call is decided in this order, each refusal a *refused* outcome rendered as the
  call's result, never an exception: the topology (`App.topology`, `kernel.judge.dispatch`: who may
  delegate to whom, depth); the agent exists; the declared areas (`kernel.judge.areas`: exact paths,
  inside the delegator's own writable areas when nested, no symbolic link on the way); no
  overlap with a running writer (`Pool.claims`). Only then is it posted on the board and queued.
- Slot first, then the monitor: the child's `activity.Monitor` (`delegate_idle_timeout`,
  `delegate_total_timeout`, parented to the delegator's, so the child's activity heartbeats it)
  is created once the slot is held, so queueing never counts as idleness. Writers queue behind
  one another when the preset cannot confine commands (the outcome says so).
- Each delegation has its own id (`<agent>.<call id>@<session prefix | delegator's id>`), run,
  checkpoint, side-effect keys and `Lane`; `app.lanerun.run_lane` runs it.
- On the board (`kernel.durable.taskboard`, in `home/durable.db`), the task
  `<session>/<delegation id>` is posted, claimed when the slot is held, then completed or failed
  with the outcome — the outcome returned is read back from the board; a pause the person
  abandoned releases the claim (the task is open again, *paused*, with no note).
- A total or idle timeout ends the child (failed, with a note); the delegator carries on.
- `delegation_receipt` carries the outcome; the result text is `format_for_director`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import time
from collections.abc import Callable

from yagent.agents import catalog
from yagent.agents.activity import Monitor
from yagent.app import blueprint, delegationpool, delegationview
from yagent.app.delegationpool import Link, Pool
from yagent.app.delegationview import Outcome
from yagent.app.durable import ResumeDecision
from yagent.app.evidence import evidence_for
from yagent.app.fanout import FanoutError, check_area
from yagent.app.lane import Lane
from yagent.app.lanerun import LaneRun, run_lane
from yagent.app.localdocs import local_docs_for_task
from yagent.app.opensession import OpenSession
from yagent.app.runtrack import continuation_task
from yagent.app.services import DelegationServices
from yagent.kernel.confine import sandbox
from yagent.kernel.durable import taskboard
from yagent.kernel.judge import areas, delegate, dispatch
from yagent.tools.hostservices import Request
from yagent.toolspec import Effect

RECEIPT_EVENT = "delegation_receipt"
clock: Callable[[], float] = time.monotonic  # the delegations' watchdogs' clock (a test seam)
CLAIM_TTL = 7 * 24 * 3600.0  # a claim outlives any delegation; a dead process's lapses
ANALYSIS_EFFECTS = frozenset({Effect.READ, Effect.COGNITIVE, Effect.FLOW, Effect.META})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Refused(Exception):
    """A delegation refused before it started (its message says why)."""


def delegation_id(agent: str, call_id: str, scope: str) -> str:
    """`<agent>.<call id>@<scope>`: stable for one call, so a resume finds the same record."""
    return f"{_UNSAFE.sub('_', agent)[:32]}.{_UNSAFE.sub('_', call_id)[:48]}@{scope}"


def board_id(session_id: str, did: str) -> str:
    return f"{session_id}/{did}"


def child_task(
    services: DelegationServices, request: Request, declaration: areas.Declaration
) -> str:
    """The task text the child agent receives (Director constraint C19): the Director's words,
    then the instructions files of the directories it works in (`app.localdocs`: its write and
    read areas, never the root's, read fresh; what did not fit is named on a visible line)."""
    paths = ["/".join(a) or "." for a in (*declaration.writable, *declaration.read_only)]
    docs = local_docs_for_task(services.workspace, paths)
    return f"{request.task}\n\n{docs.text}" if docs.text else request.task


def after_child(
    services: DelegationServices, session_id: str, outcome: Outcome, ran: LaneRun
) -> Outcome:
    """The outcome once the child finished, before it is recorded: with what its work proves
    (Director constraints C6, C7, C15, C16) — its evidence set (`app.evidence`: empty unless it
    submitted through `agent_exit`) and, for an analysis agent (its profile is read-only) or
    one whose exit offered findings, the blueprint fold's account line. The fold only warns:
    whatever goes wrong there is a line in the account, never a failed delegation."""
    if outcome.status == delegationview.PAUSED or ran.result is None:
        return outcome
    did, session_id = outcome.delegation_id, ran.session_id or session_id  # where it ran
    evidence = evidence_for(services.store, session_id, did)
    account = ""
    offered = blueprint.exit_blueprint(services.store, session_id, did)
    if offered is not None or _analysis(services, outcome.agent):
        account = blueprint.fold_delegation(services.home, services.store, session_id, did).line()
    return dataclasses.replace(outcome, evidence=evidence.files, blueprint=account)


def _analysis(services: DelegationServices, agent: str) -> bool:
    """Whether the agent reads and changes nothing (Repo, Meta, a read-only custom agent): its
    findings are what a blueprint keeps."""
    try:
        effects = services.agent(agent).profile.effects
    except catalog.AgentConfigError:  # it ran moments ago; a config changed since folds nothing
        return False
    return Effect.READ in effects and effects <= ANALYSIS_EFFECTS


class Runner:
    """One agent run's delegations (implements `tools.hostservices.Delegator`)."""

    def __init__(
        self,
        services: DelegationServices,
        session: OpenSession,
        caller: str,
        lane: Lane | None,
        monitor: Monitor,
    ) -> None:
        link = lane.link if lane is not None else None
        self.services, self.session, self.caller, self.monitor = services, session, caller, monitor
        self.session_id = session_id = session.id
        size = delegationpool.normalise(services.config.agent.max_parallel_delegations)
        self.pool = link.pool if link is not None else Pool(size)
        self.depth = link.depth if link is not None else 0
        self.slot = link.slot if link is not None else None
        self.scope = lane.delegation_id if lane is not None else session_id[:8]
        self.areas = lane.declaration if lane is not None else None

    async def delegate(self, request: Request) -> str:
        did = await self._fresh_id(request)
        try:
            declaration = self.admit(did, request)
        except Refused as exc:
            receipt = delegate.Receipt.refused(request.agent, str(exc))
            outcome = Outcome.of(receipt, delegation_id=did, call_id=request.call_id)
            self._publish_receipt(outcome)
            return delegationview.format_for_director(outcome)
        try:
            outcome = await self.run(did, request, declaration, resume=None)
        finally:
            self.pool.claims.release(did)
        return delegationview.format_for_director(outcome)

    async def _fresh_id(self, request: Request) -> str:
        """The call's delegation id; a call id the model reused in this session gets `~n`."""
        base = did = delegation_id(request.agent, request.call_id, self.scope)
        n = 1
        while await self.services.board.get(board_id(self.session_id, did)) is not None:
            n += 1
            did = f"{base.split('@', 1)[0]}~{n}@{self.scope}"
        return did

    def admit(self, did: str, request: Request) -> areas.Declaration:
        """The checks before anything is posted (module contract); `Refused` says which failed."""
        services = self.services
        try:
            services.topology.check(self.caller, request.agent, self.depth)
            services.agent(request.agent)
        except dispatch.DenyError as exc:
            raise Refused(f"topology ({exc.rule.value}): {exc}") from None
        except catalog.AgentConfigError as exc:  # unknown or broken agent
            raise Refused(str(exc)) from None
        read = request.read or (() if request.write else (".",))
        try:
            declaration = areas.Declaration.of(did, writable=request.write, read_only=read)
        except areas.DeclarationError as exc:
            raise Refused(f"areas: {exc}") from None
        root = services.workspace.resolve()
        for area in declaration.writable:
            shown = "/".join(area) or "."
            if self.areas is not None and not self.areas.can_write(shown):
                raise Refused(f"areas: {shown!r} is not writable by the delegator itself")
            try:
                check_area(root, did, area)
                if not root.joinpath(*area).is_file():  # declare a new file's directory
                    root.joinpath(*area).mkdir(parents=True, exist_ok=True)
            except (FanoutError, OSError) as exc:
                raise Refused(f"areas: {exc}") from None
        try:
            self.pool.claims.claim(declaration)
        except areas.WorktreeError as exc:
            raise Refused(
                f"{exc}: it may not start while another delegation writes there"
            ) from None
        return declaration

    async def run(
        self,
        did: str,
        request: Request,
        declaration: areas.Declaration,
        *,
        resume: ResumeDecision | None,
    ) -> Outcome:
        """Post, wait for a slot, run the child and record its outcome (module contract)."""
        board, tid = self.services.board, board_id(self.session_id, did)
        payload = {"agent": request.agent, "task": request.task, "call_id": request.call_id}
        found = await board.get(tid)
        if found is None:
            areas = {"write": list(request.write), "read": list(request.read)}
            await board.post(tid, payload=json.dumps({**payload, **areas}))
        elif found.lease is not None:  # a dead process's claim: this one holds the session
            with contextlib.suppress(taskboard.TokenError):  # lapsed: it holds nothing
                await board.release(found.lease.token)
        notes: list[str] = []
        if self.slot is not None:  # nested: lend our slot while we wait (no self-deadlock)
            async with self.slot.lent():
                return await self._slotted(did, tid, request, declaration, resume, notes)
        return await self._slotted(did, tid, request, declaration, resume, notes)

    async def _slotted(
        self,
        did: str,
        tid: str,
        request: Request,
        declaration: areas.Declaration,
        resume: ResumeDecision | None,
        notes: list[str],
    ) -> Outcome:
        preset = self.services.safety.preset
        sandboxed = preset.level >= sandbox.Level.NAMESPACES
        async with self.pool.slot() as slot:
            if declaration.writable and not sandboxed:
                if self.pool.writers.locked():
                    notes.append(
                        f"queued behind another writer: preset {preset.name!r} "
                        "cannot confine concurrent writers' commands (choose a sandboxed preset)"
                    )
                async with self.pool.writers:
                    return await self._claimed(did, tid, request, declaration, resume, slot, notes)
            return await self._claimed(did, tid, request, declaration, resume, slot, notes)

    async def _claimed(
        self,
        did: str,
        tid: str,
        request: Request,
        declaration: areas.Declaration,
        resume: ResumeDecision | None,
        slot: delegationpool.Slot,
        notes: list[str],
    ) -> Outcome:
        services, settings = self.services, self.services.config.agent
        claimed = await services.board.claim(tid, did, taskboard.ClaimRequest(CLAIM_TTL))
        token = claimed.lease.token if claimed.lease is not None else ""
        monitor = Monitor(  # slot first, then the monitor: queueing is not idleness
            idle=settings.delegate_idle_timeout,
            total=settings.delegate_total_timeout,
            parent=self.monitor,
            clock=clock,
        )
        writable = ["/".join(w) or "." for w in declaration.writable]
        gate = services.safety.commands.confined(writable)
        link = Link(self.pool, self.depth + 1, monitor, slot, self.scope, request.call_id)
        lane = Lane(did.split("@", 1)[0], did, declaration, gate, link)
        executor = delegate.Executor.of(request.agent, ())
        text = child_task(services, request, declaration)
        ran = await run_lane(
            services,
            self.session,
            lane,
            executor=executor,
            required=frozenset(),
            task=request.task,
            text=text if resume is None else continuation_task(resume),
            resume=resume,
            start={"parent_delegation_id": self.scope, "call_id": request.call_id},
        )
        outcome = self._outcome(did, request, ran, tuple(notes))
        outcome = after_child(services, self.session_id, outcome, ran)
        return await self._record(tid, token, outcome)

    def _outcome(self, did: str, request: Request, ran: LaneRun, notes: tuple[str, ...]) -> Outcome:
        result = ran.result
        extra = list(notes)
        status = result.status.value if result is not None else ""
        if result is not None and status in ("idle_timeout", "total_timeout"):
            extra.append(
                f"the delegation hit its {status.replace('_', ' ')} ({result.error}); what it "
                "changed before stays in the workspace"
            )
        if result is not None and not result.submitted and result.note:
            extra.append(result.note)  # answered in plain text: no submission
        outcome = Outcome.of(
            ran.receipt,
            delegation_id=did,
            call_id=request.call_id,
            run_status=ran.run_status,
            submitted=result is not None and result.submitted,
            notes=tuple(extra),
        )
        if status == delegationview.PAUSED:  # abandoned pause: paused, not failed, no note
            return Outcome(did, request.agent, request.call_id, delegationview.PAUSED, "", "")
        return outcome

    async def _record(self, tid: str, token: str, outcome: Outcome) -> Outcome:
        board = self.services.board
        try:
            if outcome.status == delegationview.PAUSED:
                await board.release(token)
                self._publish_receipt(outcome)
                return outcome
            if outcome.ok:
                task = await board.complete(token, outcome.to_board())
            else:
                task = await board.fail(token, outcome.to_board())
        except taskboard.TaskboardError as exc:
            why = f"the task board could not record this outcome ({exc})"
            outcome = dataclasses.replace(outcome, notes=(*outcome.notes, why))
            self._publish_receipt(outcome)
            return outcome
        recorded = delegationview.from_board(task) or outcome
        self._publish_receipt(recorded)
        return recorded

    def _publish_receipt(self, outcome: Outcome) -> None:
        publish = self.session.publish
        base = {"agent": outcome.agent, "delegation_id": outcome.delegation_id}
        publish(RECEIPT_EVENT, {**base, "receipt": outcome.to_dict()})
