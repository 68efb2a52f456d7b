"""A session's record of one run, and the loop's observer that writes it.

Contract:
- `Recorder` is every write a run makes to its session's record besides the events it publishes
  (`App.publish`): the messages, the usage of every model turn (priced by the app's ledger), the
  rollout-only records (tool batches, telemetry warnings) and a program's host calls (as
  `program_call` / `program_result` events, children of the program call). Every write goes
  through the session's `StepLog` (`app.steplog`): one transaction per commit point, in order.
  Rollout payloads pass pii's LOG surface first.
- `SessionObserver` is the `agents.observer.RunObserver` the app gives the loop: a step start
  flushes the previous step's records before the durable step checkpoint (`app.runtrack`) says
  the step started; events go to the run's publisher; messages, usage and batch records to the
  `Recorder`; `before_compact` to the run's `pre_compact` hooks.
- An error stop writes nothing here: how the run ended is committed by `runtrack` (status and
  error in `durable.db`), and the loaded tools are in its per-step checkpoint — the one record
  resume reads; there is no second checkpoint in `sessions.db`
  (docs/adr/0018-one-run-checkpoint.md).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from yagent.agents.observer import QuietObserver
from yagent.app.steplog import StepLog
from yagent.llm import Message
from yagent.llm.pricing import Ledger
from yagent.llm.types import AssistantTurn

Publish = Callable[[str, Mapping[str, Any]], None]
ForLog = Callable[[Mapping[str, Any]], dict[str, Any]]


class Recorder:
    """One session's writes (see the module contract)."""

    def __init__(
        self, log: StepLog, ledger: Ledger, model: str, for_log: ForLog, publish: Publish
    ) -> None:
        self.log = log
        self._ledger = ledger
        self._model = model  # the engine's, for a turn that does not name its model
        self._for_log = for_log
        self._publish = publish

    def usage(self, agent: str, turn: AssistantTurn) -> None:
        step = self._ledger.record(turn, agent=agent)
        self.log.usage(
            model=step.model or self._model,
            input_tokens=turn.usage.input_tokens,
            output_tokens=turn.usage.output_tokens,
            cache_read_tokens=turn.usage.cache_read_tokens,
            cache_write_tokens=turn.usage.cache_write_tokens,
            cost=step.cost,
        )

    def rollout(self, kind: str, payload: Mapping[str, Any]) -> None:
        """A rollout-only record (not shown, not observed)."""
        delegation = str(payload.get("delegation_id", ""))
        self.log.event(kind, self._for_log(payload), delegation)

    def message(self, agent: str, message: Message, delegation: str) -> None:
        self.log.message(message.to_dict(), agent, delegation)

    def program_observer(self, agent: str) -> Callable[[Any, Any], None]:
        """Host calls made by a program appear as children of the program call."""
        publish = self._publish

        def observe(call: Any, record: Any) -> None:
            base = {
                "agent": agent,
                "delegation_id": "",
                "parent_call_id": call.meta.get("ptc_parent", ""),
                "call_id": record.call_id,
                "name": record.tool,
            }
            publish("program_call", {**base, "arguments": json.dumps(dict(call.args))})
            publish(
                "program_result",
                {
                    **base,
                    "ok": record.ok,
                    "stage": record.stage,
                    "kind": record.kind.value if record.kind else None,
                },
            )

        return observe


class SessionObserver(QuietObserver):
    """The app's `RunObserver` for one run (see the module contract)."""

    def __init__(
        self,
        recorder: Recorder,
        *,
        agent: str,
        delegation_id: str,
        publish: Publish,
        step_started: Callable[[int], Awaitable[None]],
        before_compact: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> None:
        self._recorder = recorder
        self._agent = agent
        self._delegation = delegation_id
        self._publish = publish
        self._step_started = step_started
        self._before_compact = before_compact

    async def on_step_start(self, step: int) -> None:
        self._recorder.log.flush()  # the previous step is stored before its checkpoint says so
        await self._step_started(step)

    def on_event(self, kind: str, payload: Mapping[str, Any]) -> None:
        self._publish(kind, payload)

    def on_message(self, message: Message) -> None:
        self._recorder.message(self._agent, message, self._delegation)

    def on_usage(self, turn: AssistantTurn) -> None:
        self._recorder.usage(self._agent, turn)

    def on_activity(self, kind: str, payload: Mapping[str, Any]) -> None:
        self._recorder.rollout(kind, payload)

    async def before_compact(self, data: Mapping[str, Any]) -> None:
        await self._before_compact(data)
