"""shell.result: what a `run_bash` run hands back, and the text the model reads.

Guarantees: each way a foreground run ends (`Receipt`) has its own status line; truncation is
stated with both byte counts; a kill is described by the signal's name, never as a bare
"signal: killed"; a run a sandbox limit ended (`Receipt.LIMIT`) names the limit and its value.
The values are plain frozen data, JSON-ready through `to_payload()`.
"""

from __future__ import annotations

import enum
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
        if self.truncated:
            lines.append(
                f"[output truncated: showed first {self.shown_bytes} of {self.total_bytes} bytes]"
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
