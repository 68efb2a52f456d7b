"""delta: streaming increments throttled for display — merged shards, authoritative segments, tags.

Guarantees:
- `Throttle.push` merges fragments per (channel, segment) in arrival order and emits at most once
  per `min_interval` on the injected clock, or earlier when `max_pending` characters are waiting
  (the first increment is emitted at once). `poll` emits what has waited long enough.
- An authoritative full segment (`Piece.full`) wins over fragments of the same segment: it
  replaces what was merged, and fragments arriving after it are ignored and counted (`ignored`).
  When the display already shows text the full segment does not extend, the emit says `replace`.
- Emission order is deterministic: channels in the given `order`, then the others by name;
  within a channel, segments in the order first seen. `close` flushes everything left in that
  order with `final=True`; pushing after close is a `DeltaError`.
- `TagSplitter` splits a raw text stream into channels by inline tags (e.g. `<think>…</think>` to
  `reasoning`, the rest to `answer`), also when a tag is cut across increments: a possible
  partial tag at the end of an increment is held back until the next one (or `finish`).
Refuses: a negative interval or a non-positive `max_pending`, empty channel or segment names.
Leaves to the host: the display itself, which tags exist, and channel order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import MonotonicClock as MonotonicClock


class DeltaError(ValueError):
    """A throttle used outside its contract (bad settings, closed, nameless pieces)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """An increment of one segment on one channel; `full=True`: the authoritative whole."""

    channel: str
    segment: str
    text: str
    full: bool = False


@dataclass(frozen=True, slots=True)
class Emit:
    """What the display does: append `text`, or (`replace`) show `text` as the whole segment."""

    channel: str
    segment: str
    text: str
    replace: bool = False
    final: bool = False


@dataclass(slots=True)
class _Segment:
    text: str = ""
    shown: str = ""
    authoritative: bool = False

    def pending(self) -> int:
        if self.text.startswith(self.shown):
            return len(self.text) - len(self.shown)
        return len(self.text)


@dataclass(slots=True)
class _Channel:
    segments: dict[str, _Segment] = field(default_factory=dict)


class Throttle:
    """Merges and throttles increments for one stream."""

    def __init__(
        self,
        *,
        min_interval: float = 0.05,
        max_pending: int = 512,
        order: Sequence[str] = (),
        clock: Clock | None = None,
    ) -> None:
        if min_interval < 0 or max_pending <= 0:
            raise DeltaError("delta: min_interval must be ≥ 0 and max_pending > 0")
        self._interval = min_interval
        self._max_pending = max_pending
        self._rank = {name: i for i, name in enumerate(dict.fromkeys(order))}
        self._clock = clock or MonotonicClock()
        self._channels: dict[str, _Channel] = {}
        self._last: float | None = None
        self._closed = False
        self.ignored = 0

    def _sorted(self) -> list[tuple[str, _Channel]]:
        return sorted(
            self._channels.items(),
            key=lambda kv: (self._rank.get(kv[0], len(self._rank)), kv[0]),
        )

    def text(self, channel: str, segment: str) -> str:
        """The merged text of a segment so far (empty if never seen)."""
        seg = self._channels.get(channel, _Channel()).segments.get(segment)
        return seg.text if seg is not None else ""

    def push(self, piece: Piece) -> tuple[Emit, ...]:
        if self._closed:
            raise DeltaError("delta: the stream is closed")
        if not piece.channel or not piece.segment:
            raise DeltaError("delta: a piece needs a channel and a segment")
        channel = self._channels.setdefault(piece.channel, _Channel())
        seg = channel.segments.setdefault(piece.segment, _Segment())
        if piece.full:
            seg.text = piece.text
            seg.authoritative = True
        elif seg.authoritative:
            self.ignored += 1
            return ()
        else:
            seg.text += piece.text
        return self._maybe_flush()

    def poll(self) -> tuple[Emit, ...]:
        """Emit what is pending if the interval has passed (call it from the display's tick)."""
        if self._closed:
            return ()
        return self._maybe_flush()

    def _maybe_flush(self) -> tuple[Emit, ...]:
        now = self._clock.now()
        pending = sum(s.pending() for _, c in self._channels.items() for s in c.segments.values())
        if pending == 0:
            return ()
        if self._last is None or now - self._last >= self._interval or pending >= self._max_pending:
            self._last = now
            return self._flush(final=False)
        return ()

    def _flush(self, *, final: bool) -> tuple[Emit, ...]:
        out: list[Emit] = []
        for name, channel in self._sorted():
            for seg_name, seg in channel.segments.items():
                if seg.text == seg.shown:
                    continue
                if seg.text.startswith(seg.shown):
                    out.append(Emit(name, seg_name, seg.text[len(seg.shown) :], False, final))
                else:
                    out.append(Emit(name, seg_name, seg.text, True, final))
                seg.shown = seg.text
        return tuple(out)

    def close(self) -> tuple[Emit, ...]:
        """Flush everything left, in the deterministic order; the stream takes no more pieces."""
        if self._closed:
            return ()
        self._closed = True
        return self._flush(final=True)


class TagSplitter:
    """Routes a raw text stream into channels by inline tags (`<name>` … `</name>`)."""

    def __init__(self, tags: Mapping[str, str] | None = None, *, default: str = "answer") -> None:
        self._tags = dict(tags) if tags is not None else {"think": "reasoning"}
        if not default or not all(self._tags) or not all(self._tags.values()):
            raise DeltaError("delta: tags and channels need names")
        self._default = default
        self._open = {f"<{t}>": t for t in self._tags}
        self._markers = [*self._open, *(f"</{t}>" for t in self._tags)]
        self._inside: str | None = None
        self._held = ""
        self._block = 0

    @property
    def channel(self) -> str:
        return self._tags[self._inside] if self._inside is not None else self._default

    def _piece(self, text: str) -> list[Piece]:
        return [Piece(self.channel, str(self._block), text)] if text else []

    def _held_back(self, text: str) -> int:
        """Length of the longest tail of `text` that could start a marker."""
        for size in range(min(len(text), max(map(len, self._markers)) - 1), 0, -1):
            tail = text[-size:]
            if any(m.startswith(tail) for m in self._markers):
                return size
        return 0

    def feed(self, text: str) -> list[Piece]:
        buf = self._held + text
        out: list[Piece] = []
        while True:
            wanted = [f"</{self._inside}>"] if self._inside is not None else list(self._open)
            hits = [(buf.find(m), m) for m in wanted if m in buf]
            if not hits:
                break
            at, marker = min(hits)
            out += self._piece(buf[:at])
            buf = buf[at + len(marker) :]
            self._inside = self._open.get(marker)
            self._block += 1
        hold = self._held_back(buf)
        self._held = buf[len(buf) - hold :] if hold else ""
        out += self._piece(buf[: len(buf) - hold])
        return out

    def finish(self) -> list[Piece]:
        """Whatever was held back, as plain text of the current channel."""
        held, self._held = self._held, ""
        return self._piece(held)
