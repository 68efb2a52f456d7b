"""sessionref: a bounded, sourced snapshot of another session's conclusion, injected into this one.

Guarantees:
- `capture` bounds the text at `max_bytes` of UTF-8 (cut on a character boundary) and says so:
  `truncated` and `original_bytes` travel with the snapshot, and the rendering repeats them, so
  the model never takes a cut text for the whole.
- `source`, `source_version`, `captured_at` and `expires_at` (captured_at + ttl on the injected
  clock) travel with the snapshot.
- `state(snapshot, current_version, now)` is `fresh`, `expired` (now ≥ expires_at) or `stale`
  (the source's current version differs — newer OR older: a version that went back is no longer
  the same history). Both at once is `expired`. The TTL is the capturer's guess; the version is
  a fact, so both are judged.
- `render` never refuses: an expired or stale reference is rendered with its label (refusing
  would turn "referenced but outdated" into "never referenced"). The text comes from another
  session and is untrusted: imitations of system bands are neutralised (`reminder.neutralize`)
  before the whole is wrapped as a genuine band (`reminder.wrap`, kind `session-ref`).
Refuses (`SessionRefError`): an empty source, a missing version, non-positive `max_bytes` / `ttl`.
Leaves to the host: finding the other session, its current version, and when to re-capture.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime

from yagent.kernel.context import reminder
from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock

KIND = "session-ref"


class SessionRefError(ValueError):
    """A snapshot that cannot be captured as asked."""


class State(enum.StrEnum):
    FRESH = "fresh"
    EXPIRED = "expired"
    STALE = "stale"


Version = str | int


@dataclass(frozen=True, slots=True)
class Conclusion:
    """What was captured, from where, when, until when, and whether it was cut."""

    source: str
    source_version: Version
    text: str
    truncated: bool
    original_bytes: int
    captured_at: float
    expires_at: float

    @property
    def shown_bytes(self) -> int:
        return len(self.text.encode("utf-8", "surrogatepass"))


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    end = max_bytes
    while end > 0 and data[end] & 0xC0 == 0x80:  # never cut inside a character
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")


def capture(
    source: str,
    source_version: Version,
    text: str,
    max_bytes: int,
    ttl: float,
    clock: Clock | None = None,
) -> Conclusion:
    """A snapshot of `text` from `source` at `source_version`, at most `max_bytes` long."""
    if not isinstance(source, str) or not source.strip():
        raise SessionRefError("sessionref: a snapshot needs its source")
    if isinstance(source_version, bool) or not isinstance(source_version, str | int):
        raise SessionRefError("sessionref: the source version must be a str or an int")
    if source_version == "":
        raise SessionRefError("sessionref: a snapshot needs its source version")
    if max_bytes <= 0 or not ttl > 0:
        raise SessionRefError("sessionref: max_bytes and ttl must be positive")
    now = (clock or SystemClock()).now()
    original = len(text.encode("utf-8", "surrogatepass"))
    shown = _cut(text, max_bytes)
    return Conclusion(source, source_version, shown, shown != text, original, now, now + ttl)


def state(snapshot: Conclusion, current_version: Version, now: float) -> State:
    """fresh, expired (past expires_at, whatever the version) or stale (version moved)."""
    if now >= snapshot.expires_at:
        return State.EXPIRED
    if current_version != snapshot.source_version or type(current_version) is not type(
        snapshot.source_version
    ):
        return State.STALE
    return State.FRESH


_MEANING = {
    State.FRESH: "the source has not changed since capture and the snapshot is within its TTL",
    State.EXPIRED: "the snapshot is past its expiry: treat it as history, not as the present",
    State.STALE: "the source has changed since capture: this is what it said then, not now",
}


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def render(snapshot: Conclusion, current_version: Version, now: float) -> str:
    """The snapshot as a trusted band with its state, provenance and truncation stated."""
    label = state(snapshot, current_version, now)
    header = (
        f"session reference: source={_one_line(snapshot.source)} "
        f"version={_one_line(snapshot.source_version)} "
        f"current_version={_one_line(current_version)} state={label} "
        f"captured_at={_iso(snapshot.captured_at)} expires_at={_iso(snapshot.expires_at)} "
        f"truncated={'true' if snapshot.truncated else 'false'}"
    )
    if snapshot.truncated:
        header += f" shown_bytes={snapshot.shown_bytes} original_bytes={snapshot.original_bytes}"
    lines = [header, f"({label}: {_MEANING[label]})", reminder.neutralize(snapshot.text)]
    if snapshot.truncated:
        lines.append(
            f"[cut: {snapshot.shown_bytes} of {snapshot.original_bytes} bytes shown; "
            "the rest of the conclusion is not here]"
        )
    return reminder.wrap("\n".join(lines), kind=KIND)
