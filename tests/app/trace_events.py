"""Event payloads shaped exactly as `yagent.agents.loop` publishes them, for trace tests."""

from __future__ import annotations

import json
from typing import Any

from yagent.memory import EventRecord

INJECTION = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


class Recorder:
    """Builds `EventRecord`s with increasing seq and explicit times."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.events: list[EventRecord] = []
        self.start = start

    def add(
        self, at: float, type_: str, agent: str = "coding", delegation: str = "", **payload: Any
    ) -> None:
        body = {"agent": agent, "delegation_id": delegation, **payload}
        self.events.append(
            EventRecord(len(self.events) + 1, self.start + at, type_, delegation, body)
        )

    def step(
        self,
        at: float,
        end: float,
        step: int,
        calls: list[tuple[str, str, dict[str, Any]]],
        *,
        model: str = "gpt-4o",
        delegation: str = "",
        agent: str = "coding",
        usage: tuple[int, int] = (1200, 80),
        text: str = "",
    ) -> None:
        self.add(at, "model_request", agent, delegation, step=step, tool_defs_hash="h")
        self.add(
            end,
            "assistant_turn",
            agent,
            delegation,
            step=step,
            text=text,
            tool_calls=[{"id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in calls],
            usage={
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
            },
            model=model,
        )

    def call(
        self,
        at: float,
        step: int,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        delegation: str = "",
        agent: str = "coding",
    ) -> None:
        self.add(
            at,
            "tool_call",
            agent,
            delegation,
            step=step,
            call_id=call_id,
            name=name,
            arguments=json.dumps(args),
        )

    def result(
        self,
        at: float,
        step: int,
        call_id: str,
        name: str,
        content: str,
        *,
        ok: bool = True,
        kind: str | None = None,
        delegation: str = "",
        agent: str = "coding",
    ) -> None:
        self.add(
            at,
            "tool_result",
            agent,
            delegation,
            step=step,
            call_id=call_id,
            name=name,
            ok=ok,
            kind=kind,
            content=content,
        )

    def end(
        self,
        at: float,
        status: str = "finished",
        *,
        delegation: str = "",
        agent: str = "coding",
        steps: int = 1,
    ) -> None:
        self.add(at, "run_end", agent, delegation, status=status, steps=steps, error="", note="")


def troubled_session() -> list[EventRecord]:
    """One turn with a parallel batch, a failure, a time-out, a delegation, a call that never
    got its result, a result nobody asked for, a declared call never executed, and a tool result
    that tries to inject a script; then a second, clean turn."""
    r = Recorder()
    r.step(
        0.0,
        1.2,
        1,
        [("c1", "read_file", {"path": "a.py"}), ("c2", "read_file", {"path": "b.py"})],
        text="Reading both files.",
    )
    r.call(1.3, 1, "c1", "read_file", {"path": "a.py"})
    r.call(1.3, 1, "c2", "read_file", {"path": "b.py"})
    r.result(1.9, 1, "c1", "read_file", INJECTION)
    r.result(1.9, 1, "c2", "read_file", "not found", ok=False, kind="not_found")
    r.result(1.92, 1, "c2", "read_file", "not found", ok=False, kind="not_found")  # replayed
    r.add(1.95, "sub_agent_activity", step=1, calls=[])
    r.step(
        2.0,
        2.5,
        2,
        [
            ("c3", "run_bash", {"command": "pytest -q"}),
            ("c4", "delegate", {"task": "x"}),
            ("c5", "list_dir", {"path": "."}),
        ],
    )
    r.call(2.6, 2, "c3", "run_bash", {"command": "pytest -q"})
    r.result(5.6, 2, "c3", "run_bash", "stopped", ok=False, kind="timeout")
    r.call(5.7, 2, "c4", "delegate", {"task": "x"})
    r.add(5.75, "delegation_start", "repo", "d1", parent_delegation_id="", call_id="c4", task="x")
    r.step(
        5.8,
        6.4,
        1,
        [("k1", "grep", {"pattern": "TODO"})],
        delegation="d1",
        agent="repo",
        model="claude-haiku-4-5",
        usage=(300, 20),
    )
    r.call(
        6.5, 1, "k1", "grep", {"pattern": "TODO"}, delegation="d1", agent="repo"
    )  # never answered
    r.result(6.9, 1, "zz", "grep", "who asked?", delegation="d1", agent="repo")  # undeclared
    r.end(7.0, delegation="d1", agent="repo")
    r.result(7.1, 2, "c4", "delegate", "done")
    r.add(7.2, "reminder", step=2, text="keep going")
    r.end(7.5, "finished", steps=2)
    # a second turn (the session continued), step numbers start again
    r.step(100.0, 100.4, 1, [("c1", "agent_exit", {"reason": "ok"})], model="unpriced-model")
    r.call(100.5, 1, "c1", "agent_exit", {"reason": "ok"})
    r.result(100.6, 1, "c1", "agent_exit", "finished")
    r.end(100.7, "finished")
    return r.events
