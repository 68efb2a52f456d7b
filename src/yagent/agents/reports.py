"""Final reports read with `protocol`: the handoff object, or a deliverable that looks like one.

Contract:
- A structured `handoff` in the exit payload is always read as a report; `agent` defaults to the
  reporting agent's own name (a fact the loop knows, not a guess). When it is not a valid report
  the result says why (`note`) — a handoff that fails the contract is never silently dropped.
- Otherwise the deliverable (else the last reply) is read only when it looks like a report: it
  names both a `"status"` and a `"summary"` key. Ordinary prose and prose with unrelated JSON are
  not reports and leave no note.
- Whatever passed through repair carries `confidence = low` (the parser's guarantee) and
  `Parsed.repaired`; the deliverable itself is never changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yagent.kernel.context import protocol

_LOOKS = (re.compile(r'"status"\s*:'), re.compile(r'"summary"\s*:'))


@dataclass(frozen=True, slots=True)
class ReportReading:
    parsed: protocol.Parsed | None
    source: str  # "handoff", "deliverable", "text" or "" (nothing read)
    note: str = ""

    def event(self) -> dict[str, Any]:
        """The `report` event's payload."""
        parsed = self.parsed
        return {
            "source": self.source,
            "report": parsed.report.model_dump(mode="json") if parsed else None,
            "level": parsed.level.name.lower() if parsed else None,
            "repaired": parsed.repaired if parsed else False,
            "note": self.note,
        }


def looks_like_report(text: str) -> bool:
    return all(p.search(text) for p in _LOOKS)


def _why(exc: protocol.NotReportError) -> str:
    reasons = "; ".join(exc.reasons[:5])
    return f"{exc}" + (f" ({reasons})" if reasons else "")


def read_report(
    agent: str, exit_payload: Mapping[str, Any] | None, text: str | None
) -> ReportReading:
    """The report of a finished run, where it has one."""
    handoff = exit_payload.get("handoff") if exit_payload is not None else None
    if isinstance(handoff, Mapping):
        body = {"agent": agent, **handoff}
        try:
            return ReportReading(protocol.parse_report(json.dumps(body, default=str)), "handoff")
        except protocol.NotReportError as exc:
            return ReportReading(None, "handoff", f"the handoff is not a valid report: {_why(exc)}")
    if not text or not looks_like_report(text):
        return ReportReading(None, "")
    source = "deliverable" if exit_payload is not None else "text"
    try:
        return ReportReading(protocol.parse_report(text), source)
    except protocol.NotReportError as exc:
        return ReportReading(
            None, source, f"the {source} looks like a report but is not: {_why(exc)}"
        )
