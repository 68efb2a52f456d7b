"""shell.result: what a `run_bash` run hands back, and the text the model reads.

Guarantees: each way a foreground run ends (`Receipt`) has its own status line; truncation is
stated with both byte counts, and where the output was cut a line in it says how many bytes
(`shown_output`: the head, the cut, the tail); output that is not text (a NUL byte, or more than
`BINARY_SHARE` of it undecodable or control codes) is shown as its size and a hex dump of its
first `HEX_BYTES` bytes, never as decoded noise (`binary`); a kill is described by the signal's
name, never as a bare "signal: killed"; a run a sandbox limit ended (`Receipt.LIMIT`) names the
limit and its value. The values are plain frozen data, JSON-ready through `to_payload()`.
"""

from __future__ import annotations

import codecs
import enum
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEX_BYTES = 256  # bytes of binary output shown, as hex
BINARY_SHARE = 0.1  # share of a sample undecodable or control codes that makes output binary
_SAMPLE = 8192  # bytes looked at to judge
_PLAIN_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")


@dataclass(frozen=True, slots=True)
class Shown:
    """What a run's kept output is shown as: `text`, the bytes of output it shows, binary or not."""

    text: str
    shown_bytes: int
    binary: bool


def looks_binary(sample: bytes) -> bool:
    """A NUL byte, or more than `BINARY_SHARE` of the sample undecodable or control codes."""
    sample = sample[:_SAMPLE]
    if b"\0" in sample:
        return True
    # a character the cut left incomplete at the end is not a sign of binary
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(sample, final=False)
    odd = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in _PLAIN_CONTROLS))
    return odd > BINARY_SHARE * max(len(text), 1)


def hex_dump(data: bytes) -> str:
    """`xxd`'s layout: offset, sixteen bytes in hex, the printable ones as text."""
    rows = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        pairs = " ".join(row[i : i + 2].hex() for i in range(0, len(row), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        rows.append(f"{at:08x}: {pairs:<39}  {text}")
    return "\n".join(rows)


def shown_output(head: bytes, tail: bytes, total: int) -> Shown:
    """The kept head and tail of an output of `total` bytes as the model reads them (module
    contract): decoded, with a line at the cut; or, not text, as a hex excerpt."""
    skip = 0
    while skip < min(3, len(tail)) and 0x80 <= tail[skip] < 0xC0 and len(head) + len(tail) < total:
        skip += 1  # the tail starts inside a character: it starts at the next one
    if looks_binary(head) or looks_binary(tail[skip:][-_SAMPLE:]):
        excerpt = (head or tail)[:HEX_BYTES]
        said = (
            f"[binary output: {total} bytes, not text, not shown; the first {len(excerpt)} "
            "as hex:]\n"
        )
        return Shown(said + hex_dump(excerpt), len(excerpt), True)
    cut = total - len(head) - len(tail)
    if cut <= 0:
        joined = head + tail
        return Shown(joined.decode("utf-8", errors="replace"), len(joined), False)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(head, final=False)  # a character the cut split is cut whole
    partial = len(decoder.getstate()[0])
    head, tail, cut = head[: len(head) - partial], tail[skip:], cut + skip + partial
    marker = (
        f"[... {cut} bytes of output cut here: the first {len(head)} and the last {len(tail)} "
        "are shown ...]"
    )
    text += ("" if text.endswith("\n") or not text else "\n") + marker + "\n"
    return Shown(text + tail.decode("utf-8", errors="replace"), len(head) + len(tail), False)


class Receipt(enum.StrEnum):
    """How a foreground run ended. The values are stable: they travel in payloads and logs."""

    SUCCESS = "success"
    PIPES_HELD = "pipes_held"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    EXIT_NONZERO = "exit_nonzero"
    LIMIT = "limit"
    """A sandbox resource limit ended the run (`ShellResult.limit` says which, and how sure)."""


@dataclass(frozen=True, slots=True)
class ShellResult:
    """The outcome of one foreground run.

    `output` holds the first `shown_bytes` bytes the command wrote (decoded as UTF-8, invalid bytes
    replaced); `total_bytes` counts everything it wrote, including what was dropped past the cap.
    `exit_code` is bash's own exit code (negative: killed by that signal); it is None when the run
    was stopped by a timeout or cancellation while bash was still running.
    """

    receipt: Receipt
    exit_code: int | None
    output: str
    truncated: bool
    total_bytes: int
    duration: float
    note: str = ""
    shown_bytes: int = 0
    limit: str = ""
    binary: bool = False  # `output` is a hex excerpt of output that is not text

    def status_line(self) -> str:
        """One bracketed line naming how the run ended; empty for a plain success."""
        match self.receipt:
            case Receipt.SUCCESS:
                return ""
            case Receipt.EXIT_NONZERO:
                return f"[{describe_exit(self.exit_code)}]"
            case Receipt.PIPES_HELD:
                return (
                    f"[{describe_exit(self.exit_code)}; output still held open by a background "
                    "process it started]"
                )
            case Receipt.TIMEOUT:
                return "[timed out]"
            case Receipt.CANCELLED:
                return "[cancelled by the caller]"
            case Receipt.LIMIT:
                code = "" if self.exit_code is None else f"; {describe_exit(self.exit_code)}"
                return f"[{self.limit}{code}]"

    def to_model_text(self) -> str:
        """The text the model reads: the output, then truncation, status and note lines."""
        lines = []
        if self.truncated and not self.binary:  # a binary excerpt says it itself
            lines.append(
                f"[output truncated: showed {self.shown_bytes} of {self.total_bytes} bytes]"
            )
        if status := self.status_line():
            lines.append(status)
        if self.note:
            lines.append(f"note: {self.note}")
        if not lines:
            return self.output or "(no output)"
        body = self.output
        if body and not body.endswith("\n"):
            body += "\n"
        return body + "\n".join(lines)

    def to_payload(self) -> dict[str, Any]:
        """A JSON-serialisable view, with the model text under "text" ("limit" only when a
        limit ended the run)."""
        payload = {
            "receipt": self.receipt.value,
            "exit_code": self.exit_code,
            "output": self.output,
            "truncated": self.truncated,
            "total_bytes": self.total_bytes,
            "shown_bytes": self.shown_bytes,
            "duration": round(self.duration, 3),
            "note": self.note,
            "text": self.to_model_text(),
        }
        if self.limit:
            payload["limit"] = self.limit
        if self.binary:
            payload["binary"] = True
        return payload


def describe_exit(code: int | None) -> str:
    """ "exit code 3", or "killed by SIGKILL (exit code -9)" for a process ended by a signal."""
    if code is None:
        return "exit code unknown"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name} (exit code {code})"
    return f"exit code {code}"


@dataclass(frozen=True, slots=True)
class BackgroundHandle:
    """A started background run: its pid, process group and the log its output goes to."""

    pid: int
    pgid: int
    log_path: Path

    def to_model_text(self) -> str:
        return (
            f"started in the background: pid {self.pid}, process group {self.pgid}; output goes "
            f"to {self.log_path}. It keeps running after this call; stop it with "
            f"`kill -TERM -{self.pgid}`."
        )

    def to_payload(self) -> dict[str, Any]:
        """A JSON-serialisable view, with the model text under "text"."""
        return {
            "pid": self.pid,
            "pgid": self.pgid,
            "log_path": str(self.log_path),
            "text": self.to_model_text(),
        }
