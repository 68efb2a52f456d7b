"""What a run hands back: status, texts, the deliverable, and a plain note when nothing was
submitted and nothing went wrong — a run that stopped on an error (a failed model call, a
timeout, an abandoned pause) says so in its `error`, one line, the failure's kind named once
(`model_call_failed`), and its note says only that the text shown before the error, if any, is
the last reply and not a submission (`error_note`)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yagent.agents.activity import ActivityTimeoutError, IdleTimeoutError
from yagent.kernel.context.protocol import Parsed
from yagent.llm import EngineError, Message, Usage


class Status(enum.StrEnum):
    FINISHED = "finished"  # a successful exit call ended the run
    ANSWERED = "answered"  # ended with a plain-text reply (reminders used up); nothing submitted
    MAX_STEPS = "max_steps"
    ERROR = "error"
    CANCELLED = "cancelled"
    IDLE_TIMEOUT = "idle_timeout"
    TOTAL_TIMEOUT = "total_timeout"
    PAUSED = "paused"

    @property
    def is_error(self) -> bool:
        return self in _ERRORS

    @classmethod
    def from_timeout(cls, cause: ActivityTimeoutError) -> Status:
        return cls.IDLE_TIMEOUT if isinstance(cause, IdleTimeoutError) else cls.TOTAL_TIMEOUT


_ERRORS = frozenset({Status.ERROR, Status.CANCELLED, Status.IDLE_TIMEOUT, Status.TOTAL_TIMEOUT})


@dataclass(frozen=True, slots=True)
class AgentResult:
    status: Status
    text: str  # the last assistant text (not necessarily the deliverable)
    deliverable: str | None  # only from a successful exit call, via exitpolicy.deliverable_text
    exit_payload: Mapping[str, Any] | None
    steps: int
    messages: tuple[Message, ...]
    usage: Usage
    error: str = ""
    note: str = ""
    report: Parsed | None = None  # the final report read with `protocol`, beside the deliverable
    report_note: str = ""  # why a report-shaped handoff or deliverable could not be read

    @property
    def submitted(self) -> bool:
        return self.deliverable is not None

    def best_text(self) -> str:
        """The deliverable when one was submitted, else the last assistant text."""
        return self.deliverable if self.deliverable is not None else self.text


LAST_REPLY = "the text shown is the last reply, not a submission"


def no_submission_note(agent: str, status: Status, last_text: str) -> str:
    """The distinguishable line for a run that did not end with a successful exit call; it says
    what the text shown is only when there is one (`last_text`, the last assistant text)."""
    shown = LAST_REPLY if last_text.strip() else "the model gave no reply text"
    return (
        f"[{agent}] no deliverable was submitted through agent_exit "
        f"(the run ended as {status.value}); {shown}"
    )


def error_note(last_text: str) -> str:
    """The note of a run that stopped on an error: its `error` says what went wrong, so the note
    only says what text was shown before it, when some was (a partial reply is not a result)."""
    return LAST_REPLY if last_text.strip() else ""


def model_call_failed(exc: EngineError) -> str:
    """The error of a run whose model call failed: its kind once — an engine's classified
    message (`llm.errors`: `… HTTP 401 (unauthorized): …`) already names it."""
    kind = f"({exc.kind.value})"
    if kind in str(exc):
        return f"model call failed: {exc}"
    return f"model call failed {kind}: {exc}"
