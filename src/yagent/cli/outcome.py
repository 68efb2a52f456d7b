"""What a one-shot run (`yagent run`) ended as: its exit status and the figures of its `--json`
result line.

Contract:
- `exit_status`: 0 when the agent submitted its work through `agent_exit` (`finished`); a plain
  reply (`answered`) is 0 only for an agent whose reply is its answer (one that is never reminded
  to submit: `chat`) and never with `--fail-on-no-submit`; every other end (nothing submitted,
  error, timeout, step or turn limit, cancelled turn) is 1. `docs/usage.md` says the same.
- `summary`: `is_error` (the exit status is not 0), `num_turns` (model calls of the run),
  `duration_ms` (wall time of the turn), `total_cost_usd` from the run's cost ledger — None when
  a model call had no price, with `cost_note` saying how many: a cost is never guessed.
- `HEADER`: the first line `yagent run --json` prints, naming the version of its line schema
  (`docs/events.schema.json`); fields may be added within a version, anything removed, renamed or
  changed in meaning raises it.
"""

from __future__ import annotations

from typing import Any

from yagent.agents.results import AgentResult, Status
from yagent.llm.pricing import Totals

EVENTS_VERSION = 1
HEADER = {"type": "schema", "version": EVENTS_VERSION, "schema": "docs/events.schema.json"}


def exit_status(result: AgentResult, *, reply_is_answer: bool, fail_on_no_submit: bool) -> int:
    if result.status is Status.FINISHED:
        return 0
    if result.status is Status.ANSWERED and reply_is_answer and not fail_on_no_submit:
        return 0
    return 1


def summary(result: AgentResult, status: int, duration: float, totals: Totals) -> dict[str, Any]:
    note = ""
    if totals.unpriced_steps:
        note = (
            f"{totals.unpriced_steps} of {totals.steps} model calls had no price "
            "([llm.prices]); their cost is not counted"
        )
    return {
        "is_error": status != 0,
        "num_turns": result.steps,
        "duration_ms": round(duration * 1000),
        "total_cost_usd": totals.cost,
        "priced_cost_usd": totals.priced_cost,
        "cost_note": note,
    }
