"""What the egress proxy decided, per command: the tags it follows and the report each one gets.

Guarantees:
- `Ledger.issue()` hands out a fresh random tag (`sandboxbridge.TAG_DIGITS` hex digits from
  `secrets`) for one command; the bridge announces it on every connection it forwards and the
  proxy files that connection's decision under it. At most `MAX_TAGS` tags are followed at once:
  past that, `issue()` gives None and the command's report says it was not attributed (never a
  silent gap). `take(tag)` ends the following and hands back the `Report`; a decision for a tag
  not (or no longer) followed is filed under no command.
- Per tag, decisions are folded into entries (method, host, port, allowed, reason) with a count,
  at most `MAX_PER_TAG` distinct ones; a decision that would need one more is counted
  (`not_kept`) and still counted as allowed or refused: totals are exact, only detail is lost,
  and the report says how much.
- `Report.note()` is one bracketed line for the model and the person (empty when nothing
  happened); `to_payload()` the same as JSON-ready data.
Leaves to the proxy: judging, and the session-wide log (`EgressProxy.decisions`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from yagent.tools.egress.sandboxbridge import TAG_DIGITS

MAX_TAGS = 64
MAX_PER_TAG = 32
NOT_LISTED = "not on [sandbox] allow_hosts"
"""The recorded reason for a host off the allow-list (the 403 body says it in full)."""


@dataclass(frozen=True, slots=True)
class EgressDecision:
    """One judged request: what was asked, whether it went out, why, and for which command."""

    method: str
    host: str
    port: int
    allowed: bool
    reason: str
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class Counts:
    allowed: int = 0
    refused: int = 0
    dropped: int = 0
    """Decisions older than the kept log (counted above, no longer listed)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """Decisions alike in everything but time, and how many there were."""

    method: str
    host: str
    port: int
    allowed: bool
    reason: str
    count: int


@dataclass(frozen=True, slots=True)
class Report:
    """One command's decisions, once it ended."""

    entries: tuple[Entry, ...] = ()
    allowed: int = 0
    refused: int = 0
    not_kept: int = 0
    unattributed: str = ""
    """Why this command's decisions could not be told apart (empty: they were)."""

    @property
    def worth_telling(self) -> bool:
        return bool(self.unattributed) or self.allowed + self.refused > 0

    def note(self) -> str:
        """`[egress: 3 requests allowed (pypi.org ×2, x.org); 1 refused: y.org:443 — why]`."""
        if self.unattributed:
            return f"[egress: not attributed to this command: {self.unattributed}]"
        parts = []
        if self.allowed:
            hosts = _grouped((_where(e, short=True), e.count) for e in self.entries if e.allowed)
            plural = "request" if self.allowed == 1 else "requests"
            parts.append(f"{self.allowed} {plural} allowed" + (f" ({hosts})" if hosts else ""))
        if self.refused:
            refused = (e for e in self.entries if not e.allowed)
            why = _grouped((f"{_where(e)} — {e.reason}", e.count) for e in refused)
            parts.append(f"{self.refused} refused" + (f": {why}" if why else ""))
        if self.not_kept:
            parts.append(
                f"{self.not_kept} more not kept (only {MAX_PER_TAG} kinds of request are listed "
                "per command; the counts above include them)"
            )
        return f"[egress: {'; '.join(parts)}]" if parts else ""

    def to_payload(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "refused": self.refused,
            "not_kept": self.not_kept,
            "unattributed": self.unattributed,
            "requests": [asdict(e) for e in self.entries],
        }


def unattributed(why: str) -> Report:
    return Report(unattributed=why)


@dataclass
class _Followed:
    counts: dict[tuple[str, str, int, bool, str], int] = field(default_factory=dict)
    allowed: int = 0
    refused: int = 0
    not_kept: int = 0


class Ledger:
    """The tags being followed and their decisions (one event loop: no locking needed)."""

    def __init__(self) -> None:
        self._followed: dict[str, _Followed] = {}

    def issue(self) -> str | None:
        if len(self._followed) >= MAX_TAGS:
            return None
        tag = secrets.token_hex(TAG_DIGITS // 2)
        self._followed[tag] = _Followed()
        return tag

    def knows(self, tag: str | None) -> bool:
        return tag is not None and tag in self._followed

    def record(self, decision: EgressDecision) -> None:
        followed = self._followed.get(decision.tag) if decision.tag is not None else None
        if followed is None:
            return
        if decision.allowed:
            followed.allowed += 1
        else:
            followed.refused += 1
        d = decision
        key = (d.method, d.host, d.port, d.allowed, d.reason)
        if key in followed.counts:
            followed.counts[key] += 1
        elif len(followed.counts) < MAX_PER_TAG:
            followed.counts[key] = 1
        else:
            followed.not_kept += 1

    def take(self, tag: str) -> Report:
        followed = self._followed.pop(tag, None)
        if followed is None:
            return unattributed("the proxy was not following it")
        entries = tuple(Entry(*key, count) for key, count in followed.counts.items())
        return Report(entries, followed.allowed, followed.refused, followed.not_kept)

    @property
    def following(self) -> int:
        return len(self._followed)


def _where(entry: Entry, *, short: bool = False) -> str:
    if entry.host == "-":
        return "(no target)"
    host = f"[{entry.host}]" if ":" in entry.host else entry.host
    return host if short and entry.port in (80, 443) else f"{host}:{entry.port}"


def _grouped(items: Iterable[tuple[str, int]]) -> str:
    totals: dict[str, int] = {}
    for name, count in items:
        totals[name] = totals.get(name, 0) + count
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in totals.items())
