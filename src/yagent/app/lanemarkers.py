"""The markers that name a lane's run on the first line of its agent's prompt.

Contract: `marker(name)` names a parallel task, `delegation_marker(name)` a delegated run; the
scripted and replay engines route each task's requests by them, and `app.lane` writes them
(`Lane.frame`). Plain text functions with no dependency, so a reader of a recording
(`app.recording`) or a demo script names a lane without loading the lane's machinery.
"""

from __future__ import annotations


def marker(name: str) -> str:
    """The text on a task's first system-prompt line that names it (engines route by it)."""
    return f"[parallel task {name}]"


def delegation_marker(name: str) -> str:
    """The first-line text of a delegated run (`app.delegation`): engines route by it."""
    return f"[delegation {name}]"
