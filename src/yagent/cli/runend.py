"""What a CLI run says as it ends: the line that continues an interrupted one-shot run
(`resume_line`), the stop of a command whose turn a full disk halted (`stop_if_full`: one line,
exit `app.fulldisk.EXIT_FULL`), and a replay's divergences from its recording
(`report_divergences`: one `replay` line under `--json`, otherwise one line each)."""

from __future__ import annotations

import sys

from yagent.agents.results import AgentResult, Status
from yagent.app.assemble import App
from yagent.app.fulldisk import EXIT_FULL
from yagent.cli.render import Renderer
from yagent.cli.safetext import json_line
from yagent.llm.replay import ReplayEngine


def resume_line(result: AgentResult | None, session_id: str) -> str:
    """How to continue a one-shot run that was interrupted (an error, Ctrl-C, a timeout: its
    checkpoint is kept, `app.durable`), or '' for one that concluded."""
    command = f"`yagent resume {session_id[:12]}`"
    if result is None:  # force-stopped past the drain budget
        return f"yagent: the turn was stopped; {command} continues it from its checkpoint"
    if result.status in (Status.FINISHED, Status.ANSWERED, Status.MAX_STEPS):
        return ""
    if result.status is Status.ERROR:
        return (
            f"yagent: the run stopped on an error: fix what it names, then {command} continues it"
        )
    return f"yagent: the run was {result.status.value}; {command} continues it from its checkpoint"


def stop_if_full(app: App, session_id: str) -> None:
    """After a turn: a full disk halted it ⇒ say so in one line and exit (`EXIT_FULL`)."""
    if app.full.hit is not None:
        sys.stderr.write(app.full.line(session_id) + "\n")
        raise SystemExit(EXIT_FULL)


def report_divergences(renderer: Renderer, engine: ReplayEngine) -> None:
    if renderer.json_mode:
        line = {
            "type": "replay",
            "divergences": [
                {
                    "identity": d.identity,
                    "step": d.step,
                    "call_id": d.call_id,
                    "tool": d.tool,
                    "expected": d.expected,
                    "actual": d.actual,
                }
                for d in engine.divergences
            ],
            "unverified": [list(u) for u in engine.unverified()],
        }
        renderer.out.write(json_line(line) + "\n")
        return
    for d in engine.divergences:
        renderer.console.print(
            f"[yellow]divergence[/] {d.identity} step {d.step} {d.tool} ({d.call_id}): "
            f"recorded {(d.expected or '')[:80]!r}, got {(d.actual or '')[:80]!r}"
        )
    unverified = engine.unverified()
    if unverified:
        steps = ", ".join(f"{ident} step {step + 1}" for ident, step in unverified)
        renderer.console.print(  # its calls' results were never sent back to the model
            f"[dim]not compared: the results of the last step ({steps}); the run ended there[/]"
        )
    if not engine.divergences:
        renderer.console.print("[green]replay matched the recording[/]")
