"""Server-sent events: an incremental decoder over the bytes of a streamed HTTP body.

Contract:
- `events(chunks)` yields one `Event` per dispatched event, in order, however the body is cut
  into chunks (an event, a line, a UTF-8 character or a CR LF pair may straddle two chunks).
- Lines end at CR LF, LF or CR. A line starting with `:` is a comment. `data:` lines accumulate,
  joined by LF; `event:` names the event; one space after the colon is dropped; every other
  field (`id`, `retry`, unknown names) is ignored. A blank line dispatches the event when it has
  at least one `data` line, and otherwise only resets it (an `event:` without data is no event).
- An event not closed by a blank line when the body ends is discarded, as the SSE standard says:
  a body cut mid-event loses that event rather than yielding half of it.
- Bytes that are not UTF-8 are replaced (U+FFFD), never an exception. Nothing here parses JSON,
  bounds sizes or handles transport errors: those belong to the caller and its HTTP client.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Event:
    data: str
    event: str = ""


class _Lines:
    """Splits chunks into lines without re-scanning what is buffered (no quadratic growth)."""

    def __init__(self) -> None:
        self._partial = bytearray()
        self._skip_lf = False  # the last chunk ended in CR: a leading LF completes that CR LF

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        start = 1 if self._skip_lf and chunk[:1] == b"\n" else 0
        self._skip_lf = False
        for match in _LINE_END.finditer(chunk, start):
            self._partial += chunk[start : match.start()]
            yield bytes(self._partial)
            self._partial.clear()
            start = match.end()
            self._skip_lf = match.group() == b"\r" and start == len(chunk)
        self._partial += chunk[start:]


async def events(chunks: AsyncIterable[bytes]) -> AsyncIterator[Event]:
    """The events of an SSE body (see the module docstring)."""
    lines = _Lines()
    data: list[str] = []
    name = ""
    async for chunk in chunks:
        for raw in lines.feed(chunk):
            line = raw.decode("utf-8", "replace")
            if not line:
                if data:
                    yield Event("\n".join(data), name)
                data, name = [], ""
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
