"""The Director's delegations carry what the child should know and hand back what its work
proves: a real `yagent run --agent director --json` subprocess against a scripted
OpenAI-compatible server on loopback (the harness of `tests/e2e/test_director.py`).

- C19 / G18: a delegation working in `svc/` receives `svc/AGENTS.md` appended to its task, never
  the workspace root's (already in its system context).
- C16 / G16: the receipt lists the evidence set (the files the child really read).
- Custom agents (`[agents.NAME]`) and Claude Code's `.claude/agents` are in the Director's
  topology, and its prompt lists every agent it may call with its description, generated.
- C6 / C15: the Repo child's `agent_exit` blueprint findings are folded when backed by the
  evidence; a finding naming a file it never read is dropped, and the account line reaches the
  Director beside the deliverable, never inside it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_director import exit_turn, lines, receipts, yagent
from tests.e2e.test_providers import openai_reply
from tests.llm.wire import Received, Reply, WireServer
from yagent.app import blueprint
from yagent.llm.scripted import call, calls
from yagent.llm.types import AssistantTurn

ROOT_DOC = "ROOT-RULES-7f3a"
SVC_DOC = "SVC-RULES-91bc"
REPORT = "The API lives in svc/api.py."
FINDINGS = {
    "findings": [
        {"title": "api entry", "detail": "serve() answers", "files": ["svc/api.py"]},
        {"title": "made up", "detail": "never read", "files": ["other/x.py"]},
    ]
}


class Server(WireServer):
    """The Director delegates once to repo (reading `svc`), then exits; the child reads
    `svc/api.py` and submits its report with findings."""

    def __init__(self) -> None:
        super().__init__([])
        self.lock = threading.Lock()
        self.by_agent: dict[str, list[list[dict[str, Any]]]] = {}

    def next_reply(self, received: Received) -> Reply:
        messages: list[dict[str, Any]] = received.body["messages"]
        first = str(messages[0]["content"]).splitlines()[0]
        who = "director" if "Director agent" in first else first.rsplit("[delegation ", 1)[1]
        who = who.split("]", 1)[0]
        with self.lock:
            self.by_agent.setdefault(who, []).append(messages)
        answered = {m.get("tool_call_id") for m in messages if m["role"] == "tool"}
        return openai_reply(self.turn(who, answered))

    def turn(self, who: str, answered: set[Any]) -> AssistantTurn:
        if who == "director":
            if "r" in answered:
                return exit_turn("delegated")
            task = {"agent": "repo", "task": "Map the API.", "read": ["svc"]}
            return call("delegate", json.dumps(task), call_id="r")
        if "read-1" not in answered:
            return call("read_file", json.dumps({"path": "svc/api.py"}), call_id="read-1")
        args = {"reason": "read svc", "summary": REPORT, "blueprint": FINDINGS}
        return call("agent_exit", json.dumps(args), call_id="exit-1")


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    ws, home, user = tmp_path / "ws", tmp_path / "yhome", tmp_path / "user"
    for d in (ws / ".git", ws / "svc", ws / "other", home, user):
        d.mkdir(parents=True)
    (ws / "AGENTS.md").write_text(f"# root\n{ROOT_DOC}\n")
    (ws / "svc" / "AGENTS.md").write_text(f"# svc\n{SVC_DOC}\n")
    (ws / "svc" / "api.py").write_text("def serve():\n    return 'ok'\n")
    (ws / "other" / "x.py").write_text("x = 1\n")
    return {"ws": ws, "home": home, "user": user}


def configure(world: dict[str, Path], server: WireServer) -> None:
    (world["home"] / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        "step_retries = 0\n"
    )


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)


@pytest.mark.timeout(120)
def test_g3_c19_c16_c15_a_repo_delegation_gets_local_docs_and_folds_backed_findings(
    world: dict[str, Path],
) -> None:
    with Server() as server:
        configure(world, server)
        proc = yagent(world, "run", "--agent", "director", "--json", "-y", "map the api")
        out, err = proc.communicate(timeout=100)
    assert proc.returncode == 0, err
    events = lines(out)

    # C19 / G18: the child's first request carries svc/AGENTS.md in its task, not the root's
    first = server.by_agent["repo.r"][0]
    assert '{"findings": [{"title", "detail", "files"}]}' in text_of(first[0])  # C14: asked for
    task = [text_of(m) for m in first if m["role"] == "user"][-1]
    assert task.startswith("Map the API.")
    assert SVC_DOC in task
    assert "svc/AGENTS.md" in task
    assert ROOT_DOC not in task
    assert sum(text_of(m).count(ROOT_DOC) for m in first) <= 1  # the system context's only

    # C16 / G16: the receipt names the files the child really read
    receipt = receipts(events)["r"]
    assert receipt["status"] == "completed"
    assert receipt["evidence"] == ["svc/api.py"]
    # C6: the backed finding is in the blueprint, the unbacked one dropped with its reason
    shown = blueprint.view(world["home"], world["ws"])
    assert "api entry" in shown
    assert "made up" not in shown
    account = receipt["blueprint"]
    assert "folded 1: api entry" in account
    assert "dropped 1: made up (files not in the evidence set: other/x.py)" in account

    # C15: the Director reads the account beside the deliverable, never inside it
    director_second = server.by_agent["director"][1]
    (content,) = [text_of(m) for m in director_second if m.get("tool_call_id") == "r"]
    result = json.loads(content)  # a text result reaches the model as a JSON string
    head, deliverable = result.split("--- deliverable (verbatim) ---\n", 1)
    assert deliverable == REPORT
    assert account in head
    assert "evidence: svc/api.py" in head
    assert receipt["output"] == REPORT


REVIEWER = """---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep
---
You review changes carefully.
"""


class RosterServer(WireServer):
    """The Director calls a `.claude/agents` agent and a `[agents.NAME]` agent in one step."""

    def __init__(self) -> None:
        super().__init__([])
        self.lock = threading.Lock()
        self.firsts: dict[str, list[dict[str, Any]]] = {}

    def next_reply(self, received: Received) -> Reply:
        messages: list[dict[str, Any]] = received.body["messages"]
        first = str(messages[0]["content"]).splitlines()[0]
        who = "director" if "Director agent" in first else first.rsplit("[delegation ", 1)[1]
        who = who.split("]", 1)[0]
        answered = {m.get("tool_call_id") for m in messages if m["role"] == "tool"}
        with self.lock:
            self.firsts.setdefault(who, messages)
        if who != "director":
            return openai_reply(exit_turn(f"{who} done"))
        if answered:
            return openai_reply(exit_turn("delegated"))
        return openai_reply(
            calls(
                [
                    ("delegate", json.dumps({"agent": "reviewer", "task": "review"}), "v"),
                    ("delegate", json.dumps({"agent": "scribe", "task": "notes"}), "s"),
                ]
            )
        )


@pytest.mark.timeout(120)
def test_c4_custom_and_claude_agents_are_delegatable_and_listed_in_the_directors_prompt(
    world: dict[str, Path],
) -> None:
    folder = world["user"] / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(REVIEWER)
    with RosterServer() as server:
        configure(world, server)
        with (world["home"] / "config.toml").open("a") as config:
            config.write(
                '[agents.scribe]\nprompt = "Writes release notes. Keep them short."\n'
                'tools = ["read_file"]\n'
            )
        proc = yagent(world, "run", "--agent", "director", "--json", "-y", "review and note")
        out, err = proc.communicate(timeout=100)
    assert proc.returncode == 0, err
    got = receipts(lines(out))
    assert got["v"]["status"] == "completed", got["v"]
    assert got["v"]["output"] == "reviewer.v done"
    assert got["s"]["status"] == "completed", got["s"]
    system = text_of(server.firsts["director"][0])
    roster = system.split("Agents you may delegate to", 1)[1]
    assert "- reviewer: Reviews a change for bugs." in roster
    assert "- scribe: Writes release notes." in roster
    assert "- repo: you analyse a repository read-only and hand back a report." in roster
    assert "- director:" not in roster
