"""What a person sees of hooks in the terminal: every hook that said something, never a silent
failure; a quiet "yes" stays quiet."""

from __future__ import annotations

from yagent.cli.render import _line


def test_hooks_that_said_something_are_shown() -> None:
    base = {"hook": "lint", "event": "post_tool_use", "status": "ok", "decision": "allow"}
    assert _line("hook", {**base, "reason": ""}) is None, "a quiet yes is not shown"
    said = _line("hook", {**base, "reason": "exited with status 1 (non-blocking error)"})
    assert said is not None
    assert said.startswith("[dim]hook lint (post_tool_use): exited with status 1")
    failed = _line("hook", {**base, "status": "timed_out", "decision": "deny", "reason": "late"})
    assert failed == "[yellow]hook lint (post_tool_use): late[/]"
    denied = _line("hook", {**base, "decision": "deny", "reason": "[red]no[/]"})
    assert denied is not None
    assert "\\[red]no" in denied, "the hook's words are text, not markup"
