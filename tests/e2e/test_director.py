"""The issue's "Done when" for the Director: a real `yagent run --agent director --json`
subprocess against a scripted OpenAI-compatible server on loopback, real bwrap, real stores.

The server answers each request by who asks (the system prompt's first line: the Director, or a
delegation's `[delegation <agent>.<call id>]` marker) and by what that conversation already holds
— so a run that restarted a child from scratch would ask again for its first call and repeat its
side effect. Steps of the Director:
1. four delegate calls — two coding writers that meet at a rendezvous (each one's first request
   is answered only once the other's has arrived: a serial run never gets there), one repo
   reader, and one to devops, which the configured topology refuses;
2. one repo delegation whose request the server holds: its total timeout ends it;
3. a coding delegation that appends a line to a file with `run_bash` (its side effect), then
   asks again — the server holds that request — and a repo delegation that completes; once its
   receipt is out, the test SIGKILLs yagent (neither result reached the Director: a step's
   results are committed together);
then `yagent resume` decides both open calls by their board state: the done one's stored
receipt is its result (nothing re-runs), the interrupted child continues from its checkpoint,
and the Director finishes. Every `--json` line matches `docs/events.schema.json`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import Received, Reply, WireServer
from yagent.llm.scripted import call, calls
from yagent.llm.types import AssistantTurn
from yagent.memory import SessionStore

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"
WAIT = 60.0  # the longest a rendezvous or a held request waits (a hang guard, not a timing)
TOTAL = 6  # delegate_total_timeout, seconds: ends the held repo delegation


def exit_turn(text: str) -> AssistantTurn:
    return call("agent_exit", json.dumps({"reason": text, "summary": text}), call_id=f"x-{text}")


def delegate_turn(*items: tuple[str, str, list[str]]) -> AssistantTurn:
    return calls(
        [
            ("delegate", json.dumps({"agent": agent, "task": f"task {cid}", "write": write}), cid)
            for cid, agent, write in items
        ]
    )


class Scripted(WireServer):
    """Routes by agent identity and conversation state (module docstring)."""

    def __init__(self, *, resumed: bool) -> None:
        super().__init__([])
        self.resumed = resumed
        self.asked: dict[str, int] = {}
        self.in_flight: set[str] = set()
        self.most_in_flight = 0
        self.arrived = {"coding.a": threading.Event(), "coding.b": threading.Event()}
        self.killpoint = threading.Event()
        self.lock = threading.Lock()

    def next_reply(self, received: Received) -> Reply:
        with self.lock:
            self.received.append(received)
        messages: list[dict[str, Any]] = received.body["messages"]
        first = str(messages[0]["content"]).splitlines()[0]
        answered = {m.get("tool_call_id") for m in messages if m["role"] == "tool"}
        if "Director agent" in first:
            with self.lock:  # a delegation whose result the Director holds has ended
                self.in_flight = {w for w in self.in_flight if w.split(".")[1] not in answered}
            return openai_reply(self.director(answered))
        who = first.rsplit("[delegation ", 1)[1].split("]", 1)[0]
        with self.lock:
            self.asked[who] = self.asked.get(who, 0) + 1
            if not answered:
                self.in_flight.add(who)
                self.most_in_flight = max(self.most_in_flight, len(self.in_flight))
        turn = self.child(who, answered)
        if turn.tool_calls and turn.tool_calls[0].name == "agent_exit":
            with self.lock:
                self.in_flight.discard(who)
        return openai_reply(turn)

    def director(self, answered: set[Any]) -> AssistantTurn:
        if "k" in answered:
            return exit_turn("all delegated")
        if "t" in answered:
            return delegate_turn(("k", "coding", ["c"]), ("m", "repo", []))
        if "a" in answered:
            return delegate_turn(("t", "repo", []))
        return delegate_turn(
            ("a", "coding", ["a"]), ("b", "coding", ["b"]), ("c", "repo", []), ("x", "devops", [])
        )

    def child(self, who: str, answered: set[Any]) -> AssistantTurn:
        if who in self.arrived and not answered:
            self.arrived[who].set()  # rendezvous: answer only once the other has asked too
            other = "coding.b" if who == "coding.a" else "coding.a"
            assert self.arrived[other].wait(WAIT), f"{other} never ran beside {who}"
            area = who.split(".")[1]
            args = json.dumps({"path": f"{area}/out.txt", "content": f"{area}\n"})
            return call("write_file", args, call_id=f"w-{area}")
        if who == "repo.t":
            self.release.wait(WAIT)  # held until the test ends: its total timeout ends it
            return exit_turn("too late")
        if who == "coding.k" and not answered:
            line = json.dumps({"command": "echo effect >> c/log.txt"})
            return call("run_bash", line, call_id="bash-k")
        if who == "coding.k" and not self.resumed:
            self.killpoint.set()
            self.release.wait(WAIT)  # the process is killed while this request is in flight
        return exit_turn(f"{who} done")


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    ws, home, user = tmp_path / "ws", tmp_path / "yhome", tmp_path / "user"
    for d in (ws / ".git", home, user):
        d.mkdir(parents=True)
    (ws / "README.md").write_text("# project\n")
    return {"ws": ws, "home": home, "user": user}


def configure(world: dict[str, Path], server: WireServer) -> None:
    (world["home"] / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        "step_retries = 0\n"
        f"[agent]\nmax_parallel_delegations = 2\ndelegate_total_timeout = {TOTAL}\n"
        '[agents.director]\ndelegates = ["coding", "repo"]\n'
    )


def yagent(world: dict[str, Path], *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "HOME": str(world["user"]),
        "YAGENT_HOME": str(world["home"]),
        "OPENAI_API_KEY": "sk-test-not-real",
    }
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "YAGENT_CONCURRENCY"):
        env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=world["ws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def receipts(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {}
    for e in events:
        if e["type"] == "delegation_receipt":
            found[e["receipt"]["call_id"]] = e["receipt"]
    return found


def slots_peak(events: list[dict[str, Any]]) -> int:
    """The most delegations between their `delegation_start` and `delegation_receipt` at once
    (both are published while the slot is held; a refused one has no start and holds none)."""
    held: set[str] = set()
    peak = 0
    for e in events:
        if e["type"] == "delegation_start":
            held.add(e["delegation_id"])
        elif e["type"] == "delegation_receipt":
            held.discard(e["delegation_id"])
        peak = max(peak, len(held))
    return peak


@pytest.mark.timeout(240)
def test_g3_g12_g13_c12_director_pool_topology_timeout_kill_and_resume(
    world: dict[str, Path],
) -> None:
    with Scripted(resumed=False) as server:
        configure(world, server)
        proc = yagent(world, "run", "--agent", "director", "--json", "-y", "ship it")
        assert proc.stdout is not None
        seen: list[dict[str, Any]] = []

        m_done = threading.Event()

        def read() -> None:  # the stream until the kill: what the run published
            assert proc.stdout is not None
            for line in iter(proc.stdout.readline, ""):
                seen.extend(lines(line))
                if seen and seen[-1].get("receipt", {}).get("call_id") == "m":
                    m_done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert server.killpoint.wait(WAIT * 2), proc.communicate(timeout=5)
        assert m_done.wait(WAIT), "the repo delegation beside k never finished"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reader.join(timeout=30)
    log = world["ws"] / "c" / "log.txt"
    assert log.read_text() == "effect\n"  # the side effect happened before the kill

    got = receipts(seen)
    # C10 / G12: pool 2 — a and b ran at once (the rendezvous), never three at once
    assert got["a"]["status"] == got["b"]["status"] == got["c"]["status"] == "completed"
    assert (world["ws"] / "a" / "out.txt").read_text() == "a\n"
    assert server.most_in_flight == 2
    assert slots_peak(seen) == 2
    # topology: devops is not among the Director's configured delegates
    assert got["x"]["status"] == "refused"
    assert "not_allowed" in got["x"]["reason"]
    # G13: the held delegation ended at its total timeout, with a note; the Director went on
    assert got["t"]["status"] == "failed"
    assert got["t"]["run_status"] == "total_timeout"
    assert any("total timeout" in n for n in got["t"]["notes"])
    assert "k" not in got  # killed mid-delegation
    starts = [e for e in seen if e["type"] == "delegation_start" and e["call_id"] == "k"]
    assert [e["resumed"] for e in starts] == [False]
    with SessionStore(world["home"] / "sessions.db") as store:
        sid = store.list_sessions(limit=1)[0].id

    # C12 / C13: resume decides the open delegate call by its board state — k continues
    with Scripted(resumed=True) as again:
        configure(world, again)
        resumed = yagent(world, "resume", sid, "--json", "-y")
        out, err = resumed.communicate(timeout=120)
    events = lines(out)
    assert resumed.returncode == 0, err
    assert log.read_text() == "effect\n"  # no side effect repeated
    after = receipts(events)
    assert after["k"]["status"] == "completed"
    assert after["k"]["output"] == "coding.k done"
    assert [e["resumed"] for e in events if e["type"] == "delegation_start"] == [True]
    assert set(again.asked) == {"coding.k"}  # a, b, c, t, m: decided before, nothing re-ran
    assert "m" not in after  # done on the board before the kill: its stored receipt is its result
    with SessionStore(world["home"] / "sessions.db") as store:
        results = {c.call_id: str(c.content) for c in store.tool_calls(sid, delegation_id="")}
    assert "recorded before the interruption; not run again" in results["m"]
    assert "repo.m done" in results["m"]
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    for line in [*seen, *events]:
        errors = [e.message for e in validator.iter_errors(line)]
        assert not errors, (line, errors)
    result = events[-1]
    assert result["type"] == "result"
    assert result["status"] == "finished"
    assert result["deliverable"] == "all delegated"
